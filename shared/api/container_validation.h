// The model container's fields of a ModelService spec (command, ports,
// probes, volumes, shared memory) and the pod's securityContext,
// runtimeClassName and terminationGracePeriodSeconds, checked as the API
// server checks a Deployment's pod template (Kubernetes v1.34,
// k8s.io/kubernetes/pkg/apis/core/validation: validateProbe,
// validateContainerPorts, ValidateVolumes, ValidateVolumeMounts,
// ValidateRuntimeClassName), in its wording, on the ModelService's field
// paths; plus this API's own rules: a probe's port by name names a port
// of the container (http or one of spec.ports), the extra ports do not reuse
// http or spec.port, every volume is mounted at an absolute path of its own,
// and /dev/shm is spec.sharedMemorySize's. Pure.
#pragma once

#include <vector>

#include "shared/api/field_error.h"
#include "shared/api/spec.gen.h"

namespace ms::api {

void CheckContainerFields(const ModelServiceSpec& spec, std::vector<FieldError>& errors);

}  // namespace ms::api
