// What a ModelService asks for: its parsed spec, the Deployment and Service
// it should own, and the repair of only the fields the controller owns on the
// objects the API server returns (design.md §3). Pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "controller/autoscale/autoscaler.h"
#include "shared/api/spec.h"
#include "shared/api/types.h"

namespace ms::modelservice {

// The image of a ModelService without spec.image (--default-image).
inline constexpr const char* kDefaultImage = "registry.local/model-server:latest";

struct Options {
  std::string default_image = kDefaultImage;
  // Autoscaling mode HPA: the HorizontalPodAutoscaler's
  // behavior.scaleDown.stabilizationWindowSeconds (--scale-down-stabilization).
  int hpa_scale_down_stabilization_seconds = 300;
};

// What the controller builds from, resolved once per ModelService: the
// object's name and uid, its typed spec (api/spec.h) with every default
// applied, and the values derived from it (the image against
// --default-image, counts kept in range, the spec hash).
struct ResolvedSpec {
  std::string name, ns, uid;
  // The typed spec, defaulted: a field without a value of its own below is
  // read here (docs/contributor/add-a-spec-field.md).
  api::ModelServiceSpec defaulted;
  std::string model, version, image;
  int replicas = 0;
  int port = 0;
  int gpus = 0;
  api::StrategyType strategy_type = api::StrategyType::kRollingUpdate;
  api::IntOrPercent max_surge, max_unavailable;  // RollingUpdate only
  std::optional<autoscale::Spec> autoscaling;
  // spec.autoscaling.mode is HPA (only with autoscaling): a HorizontalPodAutoscaler
  // sets spec.replicas through /scale, the Deployment follows spec.replicas.
  bool hpa = false;
  // spec.rollout (issue 15): the Deployment's progressDeadlineSeconds, what
  // to do when it passes, and a hash of the spec (SpecHash) by which a
  // failed, rolled back spec is recognised.
  int rollout_timeout_seconds = static_cast<int>(*api::Rollout::kTimeoutSeconds.default_value);
  api::RollbackPolicy rollback = api::RollbackPolicy::kManual;
  std::string spec_hash;
};

// A hash of the spec with the image resolved, every field but replicas
// (which kubectl scale and an HPA change without asking for a new rollout):
// 16 hex digits of FNV-1a 64 over SpecHashInput's JSON. A rollout of the same
// hash is the same attempt.
std::string SpecHash(const api::ModelServiceSpec& defaulted, const std::string& image);
// What SpecHash hashes: the defaulted spec without the values that equal
// the defaults (so that a release which adds a defaulted field does not
// change the hash of every spec, and retry a version that was rolled back),
// without replicas, with "image" the resolved image.
nlohmann::json SpecHashInput(const api::ModelServiceSpec& defaulted, const std::string& image);

// The typed spec of the object, defaulted by api::ModelServiceSpec::Defaulted
// (the webhook normally has filled the defaults in already; a value that
// could not be read gets its default too), with the image resolved against
// --default-image and the replica counts kept >= 1.
ResolvedSpec ResolveSpec(const nlohmann::json& model_service, const Options& opts);

// The ownerReference to the ModelService (controller, blockOwnerDeletion).
nlohmann::json OwnerReference(const ResolvedSpec& spec);

nlohmann::json DesiredDeployment(const ResolvedSpec& spec, int replicas);
// The pods' label selector as a string ("k=v,k=v", keys sorted), which the
// status carries for the scale subresource.
std::string SelectorString(const ResolvedSpec& spec);
nlohmann::json DesiredService(const ResolvedSpec& spec);

// One owned field that differed, e.g. "spec.replicas".
using Drift = std::vector<std::string>;

// Sets the owned fields on `current` (an object as the API server returns
// it) and returns the fields that drifted; leaves everything else alone. An
// empty result means `current` was not changed.
Drift RepairDeployment(const ResolvedSpec& spec, int replicas, nlohmann::json& current);
Drift RepairService(const ResolvedSpec& spec, nlohmann::json& current);

// The Deployment's spec.replicas (1 when absent, as the API server defaults).
int DeploymentReplicas(const nlohmann::json& deployment);

// ---- Autoscaling mode HPA (issue 15 part 3) ----

// The External metric the HorizontalPodAutoscaler reads (design.md §3).
inline constexpr const char* kQueueLengthMetric = "modelservice_queue_length";
// The HPA's second External metric, with spec.autoscaling.targetGPUUtilization
// (target type Value: the HPA's rule is then ceil(C x U / targetU)).
inline constexpr const char* kGpuUtilizationMetric = "modelservice_gpu_utilization";

// The autoscaling/v2 HorizontalPodAutoscaler of a ModelService in mode HPA:
// named like it, on its scale subresource, one External metric
// modelservice_queue_length selected by the HPA's namespace (the External
// metrics API is namespaced: the HPA asks under /namespaces/NS/) and the
// label selector modelservice=NAME, target
// AverageValue = targetQueueLength, min/max from spec.autoscaling,
// behavior.scaleDown.stabilizationWindowSeconds from the options.
nlohmann::json DesiredHorizontalPodAutoscaler(const ResolvedSpec& spec, const Options& opts);
// Sets the owned fields of an HPA as the API server returns it (labels,
// ownerReference, scaleTargetRef, min/maxReplicas, metrics compared by
// meaning: a quantity "1k" is 1000, the scale-down window; the rest of
// behavior and the status are left alone) and returns what drifted.
Drift RepairHorizontalPodAutoscaler(const ResolvedSpec& spec, const Options& opts, nlohmann::json& current);
// A Kubernetes quantity ("5", "1500m", "1k", "2Ki", "1e3") as a number.
std::optional<double> ParseQuantity(const std::string& quantity);

}  // namespace ms::modelservice
