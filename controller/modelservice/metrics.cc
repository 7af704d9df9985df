#include "controller/modelservice/metrics.h"

namespace ms::modelservice {

ModelServiceMetrics::ModelServiceMetrics(metrics::Registry& registry, bool per_object)
    : per_object(per_object),
      replicas(Add(registry, "modelservice_replicas",
                   "Replicas of a ModelService: desired (what the controller asks for) and ready", {"kind"})),
      conditions(Add(registry, "modelservice_status_condition",
                     "The conditions of a ModelService's status: 1 for its current type, status and reason",
                     {"type", "status", "reason"})),
      info(Add(registry, "modelservice_info",
               "A ModelService and the version it serves (status.servingVersion), always 1", {"version"})) {}

metrics::ObjectGauges& ModelServiceMetrics::Add(metrics::Registry& registry, std::string name, std::string help,
                                                std::vector<std::string> series_labels) {
  if (per_object) return registry.AddObjectGauges(std::move(name), std::move(help), std::move(series_labels));
  return unregistered_.emplace_back(std::move(name), std::move(help), std::move(series_labels));
}

}  // namespace ms::modelservice
