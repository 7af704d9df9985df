// Metrics are prometheus-cpp's (Debian prometheus-cpp-dev, core only). A
// program has one metrics::Registry, made by its main; each subsystem
// declares all of its families in one place, a struct built from the
// registry (e.g. kube::ClientMetrics in controller/kube/metrics.h), which the
// subsystem's parts take by reference, so no metric is ever missing:
//
//   metrics::Registry registry;                     // main
//   kube::ClientMetrics client_metrics(registry);   // rest_client_*
//   kube::HttpClient client(config, clock, client_metrics);
//
// The side endpoint (transport/side_endpoints.h) serves the registry with
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

#include <cstdint>
#include <deque>
#include <functional>
#include <iosfwd>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "shared/metrics/object_metrics.h"

namespace ms::metrics {

// The text format's Content-Type. prometheus-cpp's own HTTP exposer (the
// pull module, not used here) sends "text/plain; charset=utf-8" without the
// version.
inline constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

// Everything `collectables` hold, in the Prometheus text format 0.0.4,
// written by prometheus::TextSerializer. Help texts are escaped first
// (backslash and newline): TextSerializer writes them as they are, and one
// with a newline would break the exposition. Written to `out` as it is
// produced (a gzip stream, say: the text of many objects need never be
// held whole), or returned.
void Serialize(std::span<const prometheus::Collectable* const> collectables, std::ostream& out);
std::string Serialize(std::span<const prometheus::Collectable* const> collectables);
inline std::string Serialize(const prometheus::Collectable& collectable) {
  const prometheus::Collectable* one[] = {&collectable};
  return Serialize(one);
}

// `count` buckets from `start`, each `factor` times the previous, as
// client_golang's ExponentialBuckets (prometheus-cpp has no such helper).
prometheus::Histogram::BucketBoundaries ExponentialBuckets(double start, double factor, int count);

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

// Code run at every collection, before the families are read: gauges that
// are computed from state rather than set as it changes (the age of the work
// in progress, as client-go's workqueue reports it). A collectable with no
// families of its own, listed before the families.
class CollectHooks final : public prometheus::Collectable {
 public:
  // Unregisters its hook when destroyed (waiting for a collection that runs it).
  class Handle {
   public:
    Handle() = default;
    Handle(CollectHooks* hooks, uint64_t id) : hooks_(hooks), id_(id) {}
    Handle(Handle&& o) noexcept : hooks_(std::exchange(o.hooks_, nullptr)), id_(o.id_) {}
    Handle& operator=(Handle&& o) noexcept;
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    ~Handle() { Reset(); }
    void Reset();

   private:
    CollectHooks* hooks_ = nullptr;
    uint64_t id_ = 0;
  };

  [[nodiscard]] Handle Add(std::function<void()> hook);
  std::vector<prometheus::MetricFamily> Collect() const override;  // runs the hooks; no families

 private:
  mutable std::mutex mu_;
  std::map<uint64_t, std::function<void()>> hooks_;
  uint64_t next_id_ = 1;
};

// A program's metrics: the families its subsystems register, the hooks that
// update some of them at collection, and the process_* collector. Not
// copyable: one per program.
class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  prometheus::Registry& families() { return families_; }
  const prometheus::Registry& families() const { return families_; }
  CollectHooks& hooks() { return hooks_; }
  // A family of per-object gauges (object_metrics.h), held here for the
  // program's life. Registered at start-up, as the families; a name already
  // taken by another object family throws std::invalid_argument.
  ObjectGauges& AddObjectGauges(std::string name, std::string help, std::vector<std::string> series_labels = {});
  // What /metrics serves, in that order: the process_* metrics, the hooks'
  // updates, the families, then the object families.
  std::vector<const prometheus::Collectable*> Collectables() const;

 private:
  const ProcessCollector process_;
  CollectHooks hooks_;
  prometheus::Registry families_;
  mutable std::mutex objects_mu_;
  std::deque<ObjectGauges> objects_;  // a deque: references stay valid as it grows
};

inline std::string Serialize(const Registry& registry) { return Serialize(registry.Collectables()); }

}  // namespace ms::metrics
