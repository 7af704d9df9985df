// The autoscaler's metrics, all declared here. Built once per program from
// its registry.
#pragma once

#include <optional>

#include "shared/metrics/metrics.h"

namespace ms::autoscale {

struct AutoscalerMetrics {
  // `per_object` false (--per-object-metrics=false): queue_length is not
  // registered, and the autoscaler writes nothing to it.
  explicit AutoscalerMetrics(metrics::Registry& registry, bool per_object = true);

 private:
  std::optional<metrics::ObjectGauges> unregistered_;  // queue_length when !per_object

 public:
  const bool per_object;
  // modelservice_autoscaler_queue_length{namespace,name}: the last queue
  // length read per autoscaled ModelService (NaN after a failed read; the
  // series goes with the object).
  metrics::ObjectGauges& queue_length;
  // modelservice_autoscaler_queries_total{result=success|error}: the
  // poller's queries.
  prometheus::Counter& queries_ok;
  prometheus::Counter& queries_error;
  // modelservice_autoscaler_circuit_breaker_open: 1 while the poller does
  // not query Prometheus (breaker open or half-open), else 0.
  prometheus::Gauge& breaker_open;
};

}  // namespace ms::autoscale
