// The ModelService controller's own metrics, all declared here. Built once
// per program from its registry.
#pragma once

#include <deque>

#include "shared/metrics/metrics.h"

namespace ms::modelservice {

struct ModelServiceMetrics {
  // `per_object` false (--per-object-metrics=false): the three families
  // below are not registered, and the executor writes nothing to them.
  explicit ModelServiceMetrics(metrics::Registry& registry, bool per_object = true);

 private:
  // The families when per_object is false: never registered, never written.
  std::deque<metrics::ObjectGauges> unregistered_;
  metrics::ObjectGauges& Add(metrics::Registry& registry, std::string name, std::string help,
                             std::vector<std::string> series_labels);

 public:
  // Whether the per-ModelService series are exported (they name every
  // ModelService of every namespace).
  const bool per_object;
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
