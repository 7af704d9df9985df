// The parts of the desired objects that their repair compares against:
// built in desired.cc, checked field by field in repair.cc. Internal to
// controller/modelservice.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>

#include "controller/modelservice/desired.h"

namespace ms::modelservice {

nlohmann::json LabelsJson(const std::map<std::string, std::string>& labels);
// nvidia.com/gpu as the API server spells the quantity: "1".
nlohmann::json GpuQuantity(int gpus);
// Container "model": image, MODEL_NAME, MODEL_VERSION, GPUs (the rest: pod_fields.h).
nlohmann::json DesiredContainer(const ResolvedSpec& spec);
// The Deployment's strategy: Recreate, or RollingUpdate with maxSurge/maxUnavailable.
nlohmann::json DesiredStrategy(const ResolvedSpec& spec);
// The HPA's one External metric (modelservice_queue_length, AverageValue).
nlohmann::json HpaMetrics(const ResolvedSpec& spec);
// The HPA's target: the ModelService's scale subresource.
nlohmann::json ScaleTargetRef(const ResolvedSpec& spec);

}  // namespace ms::modelservice
