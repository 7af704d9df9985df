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
  metrics::ObjectGauges& replicas;
  // modelservice_status_condition{namespace,name,type,status,reason} 1: each
  // condition of a ModelService's status as it stands (one series per
  // condition type), so alerts need no kube-state-metrics.
  metrics::ObjectGauges& conditions;
  // modelservice_info{namespace,name,version} 1: the version it serves.
  metrics::ObjectGauges& info;
};

}  // namespace ms::modelservice
