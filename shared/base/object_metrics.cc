#include "shared/base/object_metrics.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace ms::metrics {

ObjectGauges::ObjectGauges(std::string name, std::string help, std::vector<std::string> series_labels)
    : name_(std::move(name)), help_(std::move(help)), series_labels_(std::move(series_labels)) {
  // Written in name order, as prometheus-cpp writes its families' labels (a
  // std::map): the exposition reads the same as before this class.
  order_.push_back({"namespace", 0});
  order_.push_back({"name", 1});
  for (std::size_t i = 0; i < series_labels_.size(); ++i) order_.push_back({series_labels_[i], 2 + i});
  std::sort(order_.begin(), order_.end());
}

namespace {

void CheckArity(const std::vector<std::string>& names, const ObjectGauges::Series& s, const std::string& family) {
  if (s.labels.size() != names.size())
    throw std::invalid_argument(family + ": a series has " + std::to_string(s.labels.size()) +
                                " label values, the family " + std::to_string(names.size()));
}

}  // namespace

void ObjectGauges::Set(const std::string& ns, const std::string& name, std::vector<Series> series) {
  for (const auto& s : series) CheckArity(series_labels_, s, name_);
  std::lock_guard<std::mutex> g(mu_);
  if (series.empty()) {
    objects_.erase({ns, name});
    return;
  }
  series.shrink_to_fit();
  objects_[{ns, name}] = std::move(series);
}

void ObjectGauges::Put(const std::string& ns, const std::string& name, Series series) {
  CheckArity(series_labels_, series, name_);
  std::lock_guard<std::mutex> g(mu_);
  auto& held = objects_[{ns, name}];
  auto it = std::find_if(held.begin(), held.end(), [&](const Series& s) { return s.labels == series.labels; });
  if (it != held.end()) {
    it->value = series.value;
  } else {
    held.push_back(std::move(series));
  }
}

void ObjectGauges::Remove(const std::string& ns, const std::string& name) {
  std::lock_guard<std::mutex> g(mu_);
  objects_.erase({ns, name});
}

std::size_t ObjectGauges::Objects() const {
  std::lock_guard<std::mutex> g(mu_);
  return objects_.size();
}

std::vector<prometheus::MetricFamily> ObjectGauges::Collect() const {
  std::vector<prometheus::MetricFamily> out;
  CollectInParts(std::numeric_limits<std::size_t>::max(), [&](prometheus::MetricFamily part) {
    if (out.empty()) {
      out.push_back(std::move(part));
    } else {
      for (auto& m : part.metric) out[0].metric.push_back(std::move(m));
    }
  });
  return out;
}

void ObjectGauges::CollectInParts(std::size_t max_series,
                                  const std::function<void(prometheus::MetricFamily)>& each) const {
  auto empty_part = [&] {
    prometheus::MetricFamily family;
    family.name = name_;
    family.help = help_;
    family.type = prometheus::MetricType::Gauge;
    return family;
  };
  std::lock_guard<std::mutex> g(mu_);
  // No object, no part: as a prometheus::Family with no series, not listed.
  prometheus::MetricFamily part = empty_part();
  for (const auto& [key, series] : objects_) {
    for (const auto& s : series) {
      if (part.metric.size() == max_series) each(std::exchange(part, empty_part()));
      prometheus::ClientMetric m;
      m.label.reserve(order_.size());
      for (const auto& [label, from] : order_)
        m.label.push_back({label, from == 0 ? key.first : from == 1 ? key.second : s.labels[from - 2]});
      m.gauge.value = s.value;
      part.metric.push_back(std::move(m));
    }
  }
  if (!part.metric.empty()) each(std::move(part));
}

}  // namespace ms::metrics
