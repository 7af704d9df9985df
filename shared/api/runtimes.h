// The model servers spec.runtime names, and the conventions each one's
// image follows as its project documents them: the port it serves on, how
// it is told which model to serve, the probes that say it has loaded and
// serves, where its metrics are, the shared memory it needs and the gauge
// of its waiting requests (what queue-length autoscaling reads). Both
// programs use them: the webhook defaults spec.port from the runtime, the
// controller builds the pod template from the preset and the spec, the
// spec's own fields winning (docs/user/model-servers.md). Pure data.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "shared/api/spec.gen.h"

namespace ms::api {

struct RuntimePreset {
  int64_t port;  // spec.port's default
  // Arguments before spec.args (left out when spec.command is set); the
  // kubelet expands $(MODEL_NAME) and $(MODEL_VERSION) in them.
  std::vector<std::string> args;
  std::string_view port_flag;  // e.g. --port: "--port=<spec.port>" follows `args`
  std::vector<EnvVar> env;     // after MODEL_NAME and MODEL_VERSION; spec.env overrides by name
  std::string_view port_env;   // e.g. PORT: a variable set to spec.port
  std::optional<Probe> readiness, liveness, startup;
  std::vector<ContainerPort> ports;  // beside http; spec.ports overrides by name
  std::string_view metrics_port;     // the name of the port serving metrics
  std::string_view metrics_path;
  std::optional<Quantity> shared_memory;  // /dev/shm
  std::string_view queue_metric;          // the gauge of waiting requests
};

// The preset of `runtime` (a static object).
const RuntimePreset& Preset(Runtime runtime);

// The preset of a spec's runtime (Custom when unset).
inline const RuntimePreset& PresetOf(const ModelServiceSpec& spec) {
  return Preset(spec.runtime.value_or(Runtime::kCustom));
}

}  // namespace ms::api
