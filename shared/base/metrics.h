// Metrics are prometheus-cpp's (Debian prometheus-cpp-dev, core only): the
// programs build their families on a prometheus::Registry,
//
//   prometheus::Registry registry;
//   auto& family = prometheus::BuildCounter()
//                      .Name("controller_runtime_reconcile_total")
//                      .Help("Total number of reconciliations per controller")
//                      .Register(registry);
//   family.Add({{"controller", "modelservice"}, {"result", "success"}}).Increment();
//
// and the side endpoint (base/side_endpoints.h) serves them with
// Serialize() below. This header brings in prometheus-cpp's registry and
// metric types; what it declares itself is only what prometheus-cpp 1.0
// lacks.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include <span>
#include <string>
#include <vector>

namespace ms::metrics {

// The text format's Content-Type. prometheus-cpp's own HTTP exposer (the
// pull module, not used here) sends "text/plain; charset=utf-8" without the
// version.
inline constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

// Everything `collectables` hold, in the Prometheus text format 0.0.4,
// written by prometheus::TextSerializer. Help texts are escaped first
// (backslash and newline): TextSerializer writes them as they are, and one
// with a newline would break the exposition.
std::string Serialize(std::span<const prometheus::Collectable* const> collectables);
inline std::string Serialize(const prometheus::Collectable& collectable) {
  const prometheus::Collectable* one[] = {&collectable};
  return Serialize(one);
}

// `count` buckets from `start`, each `factor` times the previous, as
// client_golang's ExponentialBuckets (prometheus-cpp has no such helper).
prometheus::Histogram::BucketBoundaries ExponentialBuckets(double start, double factor, int count);

// Drops the series with `labels`, if any (prometheus-cpp removes by pointer
// only). For per-object gauges after the object is gone.
template <typename T>
void RemoveSeries(prometheus::Family<T>& family, const prometheus::Labels& labels) {
  if (family.Has(labels)) family.Remove(&family.Add(labels));
}

// The process_* metrics, read from /proc at every collection:
// process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_start_time_seconds,
// process_open_fds, process_max_fds (client_golang's process collector;
// prometheus-cpp has none).
class ProcessCollector final : public prometheus::Collectable {
 public:
  ProcessCollector();
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  double start_time_seconds_ = 0;
  double ticks_per_second_;
  double page_bytes_;
};

}  // namespace ms::metrics
