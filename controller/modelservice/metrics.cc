#include "controller/modelservice/metrics.h"

namespace ms::modelservice {

ModelServiceMetrics::ModelServiceMetrics(metrics::Registry& registry)
    : replicas(prometheus::BuildGauge()
                   .Name("modelservice_replicas")
                   .Help("Replicas of a ModelService: desired (what the controller asks for) and ready")
                   .Register(registry.families())) {}

}  // namespace ms::modelservice
