// The ModelService controller's own metrics, all declared here. Built once
// per program from its registry.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "base/metrics.h"

namespace ms::modelservice {

struct ModelServiceMetrics {
  explicit ModelServiceMetrics(metrics::Registry& registry);

  // modelservice_replicas{namespace,name,kind=desired|ready}: what the
  // controller asks of a ModelService's Deployment, and what is ready; the
  // series go with the object.
  prometheus::Family<prometheus::Gauge>& replicas;
  // modelservice_status_condition{namespace,name,type,status,reason} 1: each
  // condition of a ModelService's status as it stands (one series per
  // condition type), so alerts need no kube-state-metrics.
  prometheus::Family<prometheus::Gauge>& conditions;
  // modelservice_info{namespace,name,version} 1: the version it serves.
  prometheus::Family<prometheus::Gauge>& info;
};

// The series of one object in a family whose series are replaced as a whole
// (its conditions, its info): Set gives the object exactly these series, each
// with value 1, removing those it had that are not among them; Remove drops
// them all (the object is gone). Bounded: an object holds only its last set.
// Thread-safe (workers reconcile different objects at once).
class ObjectSeries {
 public:
  explicit ObjectSeries(prometheus::Family<prometheus::Gauge>& family) : family_(family) {}
  void Set(const std::string& key, std::vector<prometheus::Labels> series);
  void Remove(const std::string& key);

 private:
  prometheus::Family<prometheus::Gauge>& family_;
  std::mutex mu_;
  std::map<std::string, std::vector<prometheus::Labels>> current_;
};

}  // namespace ms::modelservice
