// The pod fields of a ModelService spec (resources, env, nodeSelector,
// tolerations, affinity, topologySpreadConstraints, imagePullSecrets,
// serviceAccountName, podAnnotations, podLabels) checked as the API server checks a Deployment's pod template
// (Kubernetes v1.34, k8s.io/kubernetes/pkg/apis/core/validation and
// pkg/api/pod/warnings.go), in its wording, on the ModelService's field
// paths: the webhook denies at admission what the API server would refuse
// later, when the controller writes the Deployment (affinity and
// topologySpreadConstraints: scheduling_validation.h). Pure.
#pragma once

#include <string>
#include <vector>

#include "shared/api/field_error.h"
#include "shared/api/spec.gen.h"

namespace ms::api {

// The errors: the API server's, plus this API's own rules (nvidia.com/gpu
// comes from spec.gpus, the controller's labels and variables are its own,
// only cpu, memory and ephemeral-storage, no pod annotation that undoes the
// restricted Pod Security Standard: an AppArmor or seccomp profile other
// than the runtime's default or a localhost one).
void CheckPodFields(const ModelServiceSpec& spec, std::vector<FieldError>& errors);

// The API server's warnings about a pod template: an env variable that
// hides an earlier one, a duplicate or empty pull secret name, a fractional
// byte value of memory or ephemeral-storage.
void AddPodWarnings(const ModelServiceSpec& spec, std::vector<std::string>& warnings);

}  // namespace ms::api
