// A small Prometheus metrics module with prometheus-cpp's API shape
// (prometheus-cpp is not packaged for this platform):
//
//   ms::metrics::Registry registry;
//   auto& family = ms::metrics::BuildCounter()
//                      .Name("controller_runtime_reconcile_total")
//                      .Help("Total number of reconciliations per controller")
//                      .Register(registry);
//   family.Add({{"controller", "modelservice"}, {"result", "success"}}).Increment();
//   std::string text = registry.Serialize();  // text format 0.0.4
//
// Metrics are thread-safe; Family::Add returns the same metric for the same
// labels and references stay valid for the registry's lifetime (unless
// Remove() is called for that metric).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ms::metrics {

using Labels = std::map<std::string, std::string>;

class Counter {
 public:
  void Increment(double v = 1.0);  // v < 0 is ignored (counters only go up)
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Increment(double v = 1.0);
  void Decrement(double v = 1.0) { Increment(-v); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

using BucketBoundaries = std::vector<double>;

class Histogram {
 public:
  // `buckets` must be strictly increasing; +Inf is implicit.
  explicit Histogram(BucketBoundaries buckets);
  void Observe(double v);

  struct Snapshot {
    BucketBoundaries bounds;
    std::vector<uint64_t> cumulative;  // one per bound, then +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot Collect() const;

 private:
  BucketBoundaries bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;  // non-cumulative, bounds_.size() + 1
  double sum_ = 0;
  uint64_t count_ = 0;
};

// Default latency buckets (seconds), as client_golang's DefBuckets.
BucketBoundaries DefaultBuckets();
// `count` buckets starting at `start`, each `factor` times the previous.
BucketBoundaries ExponentialBuckets(double start, double factor, int count);

enum class MetricType { kCounter, kGauge, kHistogram };

// Type-erased view used by the registry when it serializes.
class FamilyBase {
 public:
  virtual ~FamilyBase() = default;
  virtual const std::string& name() const = 0;
  virtual const std::string& help() const = 0;
  virtual MetricType type() const = 0;
  virtual void Serialize(std::string& out) const = 0;
};

template <typename T>
class Family final : public FamilyBase {
 public:
  Family(std::string name, std::string help, Labels const_labels)
      : name_(std::move(name)), help_(std::move(help)), const_labels_(std::move(const_labels)) {}

  // Returns the metric for `labels`, creating it with `args` if needed.
  template <typename... Args>
  T& Add(const Labels& labels, Args&&... args) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = metrics_.find(labels);
    if (it != metrics_.end()) return *it->second;
    auto [ins, ok] = metrics_.emplace(labels, std::make_unique<T>(std::forward<Args>(args)...));
    (void)ok;
    return *ins->second;
  }
  // Drops the metric (e.g. a per-object gauge after the object is deleted).
  void Remove(const Labels& labels) {
    std::lock_guard<std::mutex> g(mu_);
    metrics_.erase(labels);
  }
  bool Has(const Labels& labels) const {
    std::lock_guard<std::mutex> g(mu_);
    return metrics_.count(labels) != 0;
  }

  const std::string& name() const override { return name_; }
  const std::string& help() const override { return help_; }
  MetricType type() const override;
  void Serialize(std::string& out) const override;

 private:
  std::string name_, help_;
  Labels const_labels_;
  mutable std::mutex mu_;
  std::map<Labels, std::unique_ptr<T>> metrics_;
};

class Registry {
 public:
  // Registers a family; throws std::invalid_argument on an invalid or
  // duplicate name, or when a label name is invalid.
  template <typename T>
  Family<T>& Add(const std::string& name, const std::string& help, const Labels& const_labels) {
    auto family = std::make_unique<Family<T>>(name, help, const_labels);
    auto& ref = *family;
    Insert(std::move(family), const_labels);
    return ref;
  }
  // Runs before every Serialize(): collectors that sample state (process_*).
  void AddCollectHook(std::function<void()> hook);
  // The Prometheus text exposition format 0.0.4.
  std::string Serialize() const;

 private:
  void Insert(std::unique_ptr<FamilyBase> family, const Labels& const_labels);
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<FamilyBase>> families_;
  std::vector<std::function<void()>> hooks_;
};

template <typename T>
class Builder {
 public:
  Builder& Name(const std::string& n) {
    name_ = n;
    return *this;
  }
  Builder& Help(const std::string& h) {
    help_ = h;
    return *this;
  }
  Builder& Labels(const metrics::Labels& l) {
    labels_ = l;
    return *this;
  }
  Family<T>& Register(Registry& r) { return r.Add<T>(name_, help_, labels_); }

 private:
  std::string name_, help_;
  metrics::Labels labels_;
};

inline Builder<Counter> BuildCounter() { return {}; }
inline Builder<Gauge> BuildGauge() { return {}; }
inline Builder<Histogram> BuildHistogram() { return {}; }

// process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_start_time_seconds,
// process_open_fds, process_max_fds — sampled from /proc at scrape time.
void RegisterProcessMetrics(Registry& registry);

// Helpers shared with tests.
bool IsValidMetricName(const std::string& name);
bool IsValidLabelName(const std::string& name);
std::string FormatValue(double v);  // C locale, full precision, NaN/+Inf/-Inf
std::string EscapeLabelValue(const std::string& v);
std::string EscapeHelp(const std::string& v);

inline constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace ms::metrics
