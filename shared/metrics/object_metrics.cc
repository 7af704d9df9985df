#include "shared/metrics/object_metrics.h"

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

std::vector<ObjectGauges::Pool::iterator> ObjectGauges::Intern(const std::vector<Series>& series) {
  std::vector<Pool::iterator> out;
  out.reserve(series.size() * series_labels_.size());
  for (const auto& s : series) {
    for (const auto& value : s.labels) {
      auto it = pool_.try_emplace(value, 0).first;
      ++it->second;
      out.push_back(it);
    }
  }
  return out;
}

void ObjectGauges::Release(const std::vector<Pool::iterator>& labels) {
  for (Pool::iterator value : labels) {
    if (--value->second == 0) pool_.erase(value);
  }
}

void ObjectGauges::Drop(ObjectMap::iterator it) {
  Release(it->second.labels);
  objects_.erase(it);
}

bool ObjectGauges::Same(const Held& held, std::size_t i, const std::vector<std::string>& labels) const {
  const std::size_t k = series_labels_.size();
  for (std::size_t j = 0; j < k; ++j) {
    if (held.labels[i * k + j]->first != labels[j]) return false;
  }
  return true;
}

void ObjectGauges::Set(const std::string& ns, const std::string& name, std::vector<Series> series) {
  for (const auto& s : series) CheckArity(series_labels_, s, name_);
  std::lock_guard<std::mutex> g(mu_);
  auto it = objects_.find({ns, name});
  if (series.empty()) {
    if (it != objects_.end()) Drop(it);
    return;
  }
  Held held{Intern(series), {}};  // before the old ones are released: values kept stay pooled
  held.values.reserve(series.size());
  for (const auto& s : series) held.values.push_back(s.value);
  if (it == objects_.end()) {
    objects_.emplace(std::make_pair(ns, name), std::move(held));
    return;
  }
  Release(it->second.labels);
  it->second = std::move(held);
}

void ObjectGauges::Put(const std::string& ns, const std::string& name, Series series) {
  CheckArity(series_labels_, series, name_);
  std::lock_guard<std::mutex> g(mu_);
  Held& held = objects_[{ns, name}];
  for (std::size_t i = 0; i < held.values.size(); ++i) {
    if (Same(held, i, series.labels)) {
      held.values[i] = series.value;
      return;
    }
  }
  for (Pool::iterator value : Intern({series})) held.labels.push_back(value);
  held.values.push_back(series.value);
}

void ObjectGauges::Remove(const std::string& ns, const std::string& name) {
  std::lock_guard<std::mutex> g(mu_);
  if (auto it = objects_.find({ns, name}); it != objects_.end()) Drop(it);
}

std::size_t ObjectGauges::Objects() const {
  std::lock_guard<std::mutex> g(mu_);
  return objects_.size();
}

std::size_t ObjectGauges::LabelValues() const {
  std::lock_guard<std::mutex> g(mu_);
  return pool_.size();
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
  const std::size_t k = series_labels_.size();
  for (const auto& [key, held] : objects_) {
    for (std::size_t i = 0; i < held.values.size(); ++i) {
      if (part.metric.size() == max_series) each(std::exchange(part, empty_part()));
      prometheus::ClientMetric m;
      m.label.reserve(order_.size());
      for (const auto& [label, from] : order_)
        m.label.push_back({label, from == 0   ? key.first
                                  : from == 1 ? key.second
                                              : held.labels[i * k + from - 2]->first});
      m.gauge.value = held.values[i];
      part.metric.push_back(std::move(m));
    }
  }
  if (!part.metric.empty()) each(std::move(part));
}

}  // namespace ms::metrics
