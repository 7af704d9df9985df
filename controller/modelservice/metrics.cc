#include "controller/modelservice/metrics.h"

#include <algorithm>

namespace ms::modelservice {

ModelServiceMetrics::ModelServiceMetrics(metrics::Registry& registry)
    : replicas(prometheus::BuildGauge()
                   .Name("modelservice_replicas")
                   .Help("Replicas of a ModelService: desired (what the controller asks for) and ready")
                   .Register(registry.families())),
      conditions(prometheus::BuildGauge()
                     .Name("modelservice_status_condition")
                     .Help("The conditions of a ModelService's status: 1 for its current type, status and reason")
                     .Register(registry.families())),
      info(prometheus::BuildGauge()
               .Name("modelservice_info")
               .Help("A ModelService and the version it serves (status.servingVersion), always 1")
               .Register(registry.families())) {}

void ObjectSeries::Set(const std::string& key, std::vector<prometheus::Labels> series) {
  std::lock_guard<std::mutex> g(mu_);
  auto& held = current_[key];
  for (const auto& old : held)
    if (std::find(series.begin(), series.end(), old) == series.end()) metrics::RemoveSeries(family_, old);
  for (const auto& labels : series) family_.Add(labels).Set(1);
  held = std::move(series);
}

void ObjectSeries::Remove(const std::string& key) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = current_.find(key);
  if (it == current_.end()) return;
  for (const auto& labels : it->second) metrics::RemoveSeries(family_, labels);
  current_.erase(it);
}

}  // namespace ms::modelservice
