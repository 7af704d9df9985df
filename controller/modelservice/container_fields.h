// The parts of the pod template that the runtime (api/runtimes.h) and the
// spec set together (issue 43): the model container's command, args,
// ports, probes and volume mounts, and the pod's volumes. Each is the
// spec's value when it has one, else the runtime's, in the form the API
// server returns it (its defaults filled in: a probe's timings and scheme,
// a Secret's or ConfigMap's defaultMode), so that a served Deployment shows
// no drift and a hand edit is put back. Pure functions of the defaulted spec.
//
//   command        spec.command (none: the image's ENTRYPOINT)
//   args           the runtime's arguments and "--port=N" (not with
//                  spec.command), then spec.args
//   ports          http (spec.port), then the runtime's extra ports with
//                  spec.ports over them by name
//   probes         readiness, liveness, startup: the spec's, else the runtime's
//   volumeMounts   spec.volumes in order, then dshm at /dev/shm
//   volumes        spec.volumes' sources, then dshm: a memory-backed
//                  emptyDir of spec.sharedMemorySize (else the runtime's)
// The runtime's variables are owned with spec.env (pod_fields.cc: RuntimeEnv).
//   annotations    for a runtime other than Custom, where its metrics are
//                  (MetricsAnnotations: modelops.dev/metrics-port and
//                  -path, which the chart's PodMonitor and the documented
//                  scrape configuration read); none for Custom, whose
//                  metrics are GET /metrics on the port named http, as
//                  before runtimes existed (so its pods do not roll)
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "shared/api/spec.gen.h"

namespace ms::modelservice {

// The model container's members owned here (the cache keeps them, cached.cc).
std::vector<std::string> OwnedContainerMembers();

// The runtime's variables beside spec.env: its own (spec.env's of the same
// name win) and the one that carries spec.port, as the API server returns them.
nlohmann::json RuntimeEnv(const api::ModelServiceSpec& defaulted);

inline constexpr const char* kMetricsPortAnnotation = "modelops.dev/metrics-port";
inline constexpr const char* kMetricsPathAnnotation = "modelops.dev/metrics-path";

// The pod annotations that say where a runtime's metrics are: the number of
// its metrics port (spec.ports may move it) and the path; empty for Custom.
std::map<std::string, std::string> MetricsAnnotations(const api::ModelServiceSpec& defaulted);

// The container's args (null: none).
nlohmann::json WantArgs(const api::ModelServiceSpec& defaulted);

// The pod's volumes (null: none).
nlohmann::json WantVolumes(const api::ModelServiceSpec& defaulted);

// Sets the pod's volumes as the spec asks (sizes compared by value).
void OwnVolumes(const api::ModelServiceSpec& defaulted, nlohmann::json& pod, std::vector<std::string>& drift);

// Sets command, args, ports, probes and volumeMounts of the container
// "model" as the spec asks, appending what drifted to `drift`.
void OwnContainerFields(const api::ModelServiceSpec& defaulted, nlohmann::json& container,
                        std::vector<std::string>& drift);

}  // namespace ms::modelservice
