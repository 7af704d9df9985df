// The autoscaler's metrics, all declared here. Built once per program from
// its registry.
#pragma once

#include "base/metrics.h"

namespace ms::autoscale {

struct AutoscalerMetrics {
  explicit AutoscalerMetrics(metrics::Registry& registry);

  // modelservice_autoscaler_queue_length{namespace,name}: the last queue
  // length read per autoscaled ModelService (NaN after a failed read; the
  // series goes with the object).
  prometheus::Family<prometheus::Gauge>& queue_length;
  // modelservice_autoscaler_queries_total{result=success|error}.
  prometheus::Counter& queries_ok;
  prometheus::Counter& queries_error;
};

}  // namespace ms::autoscale
