// What the controller builds from one ModelService, per reconcile: the
// typed spec resolved from the cached object (defaults, the spec hash) and
// the desired Deployment (its pod template's fields from the spec's JSON
// form, value_text.h's ToJsonValue). Two specs: the samples' smallest
// (a model and a GPU count) and a full one (env, resources,
// scheduling, autoscaling, a rollout).
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include "controller/modelservice/desired.h"

namespace {

using ms::modelservice::DesiredDeployment;
using ms::modelservice::ResolveSpec;
using nlohmann::json;

json Object(json spec) {
  return {{"apiVersion", "modelops.dev/v1"},
          {"kind", "ModelService"},
          {"metadata", {{"name", "bench"}, {"namespace", "ml"}, {"uid", "0b7e0d5c-4d2a-4f0e-9b9e-1a2b3c4d5e6f"}}},
          {"spec", std::move(spec)}};
}

const json kSmall = Object({{"model", "bert-base-uncased"}, {"gpus", 1}});
const json kFull = Object(json::parse(R"({
  "model": "meta-llama/Llama-3.1-8B-Instruct", "runtime": "vLLM", "replicas": 3, "port": 8000, "gpus": 1,
  "env": [{"name": "HF_HOME", "value": "/cache"}, {"name": "VLLM_LOGGING_LEVEL", "value": "INFO"}],
  "resources": {"requests": {"cpu": "4", "memory": "32Gi"}, "limits": {"memory": "48Gi"}},
  "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
  "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
  "imagePullSecrets": [{"name": "registry"}],
  "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "50%", "maxUnavailable": 0}},
  "autoscaling": {"minReplicas": 1, "maxReplicas": 8, "targetQueueLength": 16},
  "rollout": {"timeoutSeconds": 600, "rollback": "Automatic"}
})"));

void ResolveAndBuild(benchmark::State& state, const json* object) {
  const ms::modelservice::Options opts;
  for (auto _ : state) {
    const auto spec = ResolveSpec(*object, opts);
    benchmark::DoNotOptimize(DesiredDeployment(spec, spec.replicas));
  }
}
BENCHMARK_CAPTURE(ResolveAndBuild, Small, &kSmall);
BENCHMARK_CAPTURE(ResolveAndBuild, Full, &kFull);

}  // namespace

BENCHMARK_MAIN();
