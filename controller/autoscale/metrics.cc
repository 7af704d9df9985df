#include "controller/autoscale/metrics.h"

namespace ms::autoscale {

namespace {

constexpr const char* kQueueLength = "modelservice_autoscaler_queue_length";
constexpr const char* kQueueLengthHelp = "Last queue length read from Prometheus per autoscaled ModelService";

prometheus::Family<prometheus::Counter>& Queries(metrics::Registry& registry) {
  return prometheus::BuildCounter()
      .Name("modelservice_autoscaler_queries_total")
      .Help("Prometheus queries made by the autoscaler, by result")
      .Register(registry.families());
}

}  // namespace

AutoscalerMetrics::AutoscalerMetrics(metrics::Registry& registry, bool per_object)
    : per_object(per_object),
      queue_length(per_object ? registry.AddObjectGauges(kQueueLength, kQueueLengthHelp)
                              : unregistered_.emplace(kQueueLength, kQueueLengthHelp)),
      queries_ok(Queries(registry).Add({{"result", "success"}})),
      queries_error(Queries(registry).Add({{"result", "error"}})),
      breaker_open(prometheus::BuildGauge()
                       .Name("modelservice_autoscaler_circuit_breaker_open")
                       .Help("1 while the autoscaler's circuit breaker stops queries to Prometheus, else 0")
                       .Register(registry.families())
                       .Add({})) {}

}  // namespace ms::autoscale
