// What a ModelService asks for: its parsed spec, the Deployment and Service
// it should own, and the repair of only the fields the controller owns on the
// objects the API server returns (design.md §3). Pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "controller/autoscale/autoscaler.h"

namespace ms::controller {

struct Options {
  std::string default_image = "registry.local/model-server:latest";
};

struct ModelServiceSpec {
  std::string name, ns, uid;
  std::string model, version, image;
  int replicas = 1;
  int port = 8080;
  int gpus = 0;
  std::string strategy_type = "RollingUpdate";  // or "Recreate"
  nlohmann::json max_surge = "25%";             // int or "N%"
  nlohmann::json max_unavailable = 0;
  std::optional<autoscale::Spec> autoscaling;
};

// Reads spec fields with the defaults of design.md §2 for anything missing
// or of the wrong type (the webhook normally fills them in).
ModelServiceSpec ParseSpec(const nlohmann::json& model_service, const Options& opts);

// The ownerReference to the ModelService (controller, blockOwnerDeletion).
nlohmann::json OwnerReference(const ModelServiceSpec& spec);
// The uid of the object's controller ownerReference, or "" when none.
std::string ControllerUid(const nlohmann::json& object);

nlohmann::json DesiredDeployment(const ModelServiceSpec& spec, int replicas);
nlohmann::json DesiredService(const ModelServiceSpec& spec);

// One owned field that differed, e.g. "spec.replicas".
using Drift = std::vector<std::string>;

// Sets the owned fields on `current` (an object as the API server returns
// it) and returns the fields that drifted; leaves everything else alone. An
// empty result means `current` was not changed.
Drift RepairDeployment(const ModelServiceSpec& spec, int replicas, nlohmann::json& current);
Drift RepairService(const ModelServiceSpec& spec, nlohmann::json& current);

// The Deployment's spec.replicas (1 when absent, as the API server defaults).
int DeploymentReplicas(const nlohmann::json& deployment);

}  // namespace ms::controller
