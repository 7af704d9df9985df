// The ModelService controller's own metrics, all declared here. Built once
// per program from its registry.
#pragma once

#include "base/metrics.h"

namespace ms::modelservice {

struct ModelServiceMetrics {
  explicit ModelServiceMetrics(metrics::Registry& registry);

  // modelservice_replicas{namespace,name,kind=desired|ready}: what the
  // controller asks of a ModelService's Deployment, and what is ready; the
  // series go with the object.
  prometheus::Family<prometheus::Gauge>& replicas;
};

}  // namespace ms::modelservice
