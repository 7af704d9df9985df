#include "controller/autoscale/metrics.h"

namespace ms::autoscale {

namespace {

prometheus::Family<prometheus::Counter>& Queries(metrics::Registry& registry) {
  return prometheus::BuildCounter()
      .Name("modelservice_autoscaler_queries_total")
      .Help("Prometheus queries made by the autoscaler, by result")
      .Register(registry.families());
}

}  // namespace

AutoscalerMetrics::AutoscalerMetrics(metrics::Registry& registry)
    : queue_length(registry.AddObjectGauges("modelservice_autoscaler_queue_length",
                                            "Last queue length read from Prometheus per autoscaled ModelService")),
      queries_ok(Queries(registry).Add({{"result", "success"}})),
      queries_error(Queries(registry).Add({{"result", "error"}})),
      breaker_open(prometheus::BuildGauge()
                       .Name("modelservice_autoscaler_circuit_breaker_open")
                       .Help("1 while the autoscaler's circuit breaker stops queries to Prometheus, else 0")
                       .Register(registry.families())
                       .Add({})) {}

}  // namespace ms::autoscale
