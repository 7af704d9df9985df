#include "controller/modelservice/metrics.h"

namespace ms::modelservice {

ModelServiceMetrics::ModelServiceMetrics(metrics::Registry& registry)
    : replicas(registry.AddObjectGauges("modelservice_replicas",
                                        "Replicas of a ModelService: desired (what the controller asks for) and ready",
                                        {"kind"})),
      conditions(registry.AddObjectGauges(
          "modelservice_status_condition",
          "The conditions of a ModelService's status: 1 for its current type, status and reason",
          {"type", "status", "reason"})),
      info(registry.AddObjectGauges("modelservice_info",
                                    "A ModelService and the version it serves (status.servingVersion), always 1",
                                    {"version"})) {}

}  // namespace ms::modelservice
