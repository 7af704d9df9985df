#include "shared/api/runtimes.h"

#include <array>
#include <string>

namespace ms::api {

namespace {

// An HTTP GET probe of `path` on the port named http.
Probe HttpProbe(const char* path, int64_t period, int64_t timeout, int64_t failures) {
  Probe p;
  p.http_get = HTTPGetAction{};
  p.http_get->path = path;
  p.http_get->port = PortNumberOrName{.number = 0, .name = "http", .is_name = true};
  p.period_seconds = period;
  p.timeout_seconds = timeout;
  p.failure_threshold = failures;
  return p;
}

// A model may take up to 30 minutes to download and load (180 x 10 s)
// before the kubelet restarts the container.
Probe StartupProbe(const char* path) { return HttpProbe(path, 10, 5, 180); }
// Ready while the server answers its health check within 5 s.
Probe ReadinessProbe(const char* path) { return HttpProbe(path, 10, 5, 3); }
// Restarted after a minute without an answer: a server busy with long
// generations still answers its health check, a hung one does not.
Probe LivenessProbe(const char* path) { return HttpProbe(path, 10, 10, 6); }

EnvVar Env(const char* name, const char* value) {
  EnvVar e;
  e.name = name;
  e.value = value;
  return e;
}

ContainerPort Port(const char* name, int64_t number) {
  ContainerPort p;
  p.name = name;
  p.container_port = number;
  p.protocol = Protocol::kTCP;
  return p;
}

RuntimePreset Custom() {
  RuntimePreset p{};
  p.port = 8080;
  // Today's probe, as the example server (examples/model-server) serves it.
  p.readiness = Probe{};
  p.readiness->http_get = HTTPGetAction{};
  p.readiness->http_get->path = "/healthz";
  p.readiness->http_get->port = PortNumberOrName{.number = 0, .name = "http", .is_name = true};
  p.metrics_port = "http";
  p.metrics_path = "/metrics";
  p.queue_metric = "modelservice_queue_length";
  return p;
}

// vLLM's OpenAI-compatible server (vllm/vllm-openai, whose entrypoint is
// `vllm serve`): the model by --model, the port by --port (8000); GET
// /health answers once the engine has loaded; /metrics on the same port;
// vllm:num_requests_waiting counts the requests waiting to be scheduled.
// PyTorch's workers share tensors through /dev/shm.
RuntimePreset VLLM() {
  RuntimePreset p{};
  p.port = 8000;
  p.args = {"--model=$(MODEL_NAME)"};
  p.port_flag = "--port";
  p.readiness = ReadinessProbe("/health");
  p.liveness = LivenessProbe("/health");
  p.startup = StartupProbe("/health");
  p.metrics_port = "http";
  p.metrics_path = "/metrics";
  p.shared_memory = Quantity{"2Gi"};
  p.queue_metric = "vllm:num_requests_waiting";
  return p;
}

// Hugging Face Text Generation Inference (its launcher reads MODEL_ID and
// PORT): GET /health answers once the model is loaded; /metrics on the same
// port; tgi_queue_size counts the requests waiting for a batch. Its docs
// ask for 1 GB of /dev/shm (NCCL).
RuntimePreset TGI() {
  RuntimePreset p{};
  p.port = 8080;
  p.env = {Env("MODEL_ID", "$(MODEL_NAME)")};
  p.port_env = "PORT";
  p.readiness = ReadinessProbe("/health");
  p.startup = StartupProbe("/health");
  p.metrics_port = "http";
  p.metrics_path = "/metrics";
  p.shared_memory = Quantity{"1Gi"};
  p.queue_metric = "tgi_queue_size";
  return p;
}

// NVIDIA Triton (tritonserver): a model repository mounted at /models (a
// volume of spec.volumes), the model loaded by name; KServe's V2 health
// endpoints on the HTTP port (8000), metrics on 8002;
// nv_inference_pending_request_count counts the requests waiting per model.
RuntimePreset Triton() {
  RuntimePreset p{};
  p.port = 8000;
  p.args = {"tritonserver", "--model-repository=/models", "--model-control-mode=explicit",
            "--load-model=$(MODEL_NAME)"};
  p.port_flag = "--http-port";
  p.readiness = ReadinessProbe("/v2/health/ready");
  p.liveness = LivenessProbe("/v2/health/live");
  p.startup = StartupProbe("/v2/health/ready");
  p.ports = {Port("metrics", 8002)};
  p.metrics_port = "metrics";
  p.metrics_path = "/metrics";
  p.shared_memory = Quantity{"1Gi"};
  p.queue_metric = "nv_inference_pending_request_count";
  return p;
}

// Seldon's MLServer (`mlserver start`, configured by MLSERVER_* variables):
// KServe's V2 health endpoints on the HTTP port (8080), metrics on 8082.
// Its one gauge of load is rest_server_requests_in_progress (REST requests
// being served or waiting, per method; measured with MLServer 1.7.1:
// parallel_request_queue is a histogram of samples, not a current value).
// MLSERVER_MODEL_NAME and _VERSION name the model of an image configured by
// variables; a model-settings.json that names its model wins over them.
RuntimePreset MLServer() {
  RuntimePreset p{};
  p.port = 8080;
  p.env = {Env("MLSERVER_MODEL_NAME", "$(MODEL_NAME)"), Env("MLSERVER_MODEL_VERSION", "$(MODEL_VERSION)"),
           Env("MLSERVER_METRICS_PORT", "8082")};
  p.port_env = "MLSERVER_HTTP_PORT";
  p.readiness = ReadinessProbe("/v2/health/ready");
  p.liveness = LivenessProbe("/v2/health/live");
  p.startup = StartupProbe("/v2/health/ready");
  p.ports = {Port("metrics", 8082)};
  p.metrics_port = "metrics";
  p.metrics_path = "/metrics";
  p.queue_metric = "rest_server_requests_in_progress";
  return p;
}

}  // namespace

const RuntimePreset& Preset(Runtime runtime) {
  static const std::array<RuntimePreset, kRuntimeNames.size()> kPresets = {Custom(), VLLM(), TGI(), Triton(),
                                                                           MLServer()};
  return kPresets[static_cast<size_t>(runtime)];
}

}  // namespace ms::api
