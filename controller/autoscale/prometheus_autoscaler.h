// The Autoscaler backed by Prometheus (design.md §3): takes L from the
// poller's last reading of the query rendered from the template, applies the
// formula with the HPA's tolerance, and stabilizes scale-down like the HPA's
// downscale stabilization window. It never waits for Prometheus.
//
// Per call to Recommend(ns, name, spec, C):
//  1. query = RenderQuery(template, ns, name); the poller is told to watch it
//     (a new or changed query is read at once, and its answer queues the
//     object again through the poller's on_change).
//  2. No answer yet (nothing read, no error): pending, replicas C kept,
//     nothing reported as wrong.
//  3. No value read within `max_age` (none at all, or the last one is older:
//     Prometheus fails, is blackholed behind the breaker, or the poller is
//     behind): metrics_ok = false, reason "MetricsUnavailable", the message
//     says why (the error Prometheus' answer or the failed connection gave,
//     also while the breaker is open; "no value read in the last 45s" when
//     there is none) and names the query. It says nothing of the breaker's
//     state, the last value or its age: it reads the same in a restarted
//     controller, so a restart rewrites no condition;
//     desired_replicas = C: no scale change on stale data, and the history
//     is not touched. Logged at warning level once per object and error,
//     again after kWarnEvery (debug level in between); the first good read
//     after it logs the recovery. Keeping the replicas and setting Degraded
//     is the CALLER's job; this class changes nothing in the cluster.
//     A value within `max_age` is used even when the latest attempt failed.
//  4. raw = DesiredReplicas(L, spec, C, tolerance): the formula, except that
//     C is kept (clamped into [min,max]) while |L/(C*T) - 1| <= tolerance,
//     so a queue hovering around the threshold does not flap.
//  5. The pair (now, raw) is recorded for ns/name, and the answer is the
//     HIGHEST recommendation recorded within the window [now - W, now]
//     (this one included), clamped into the current spec's [min,max]. So a
//     scale-up happens at once, and a scale-down happens only once every
//     recommendation of the last W is at or below the new value, and then to
//     the highest of them. (The HPA stores the recommendation before the
//     min/max clamp; this stores it after the clamp of the spec in force at
//     the time, and clamps again by the current spec.)
//
// State: per object, a monotonic deque of (time, raw) samples; samples that
// can never again be the maximum are dropped, so it holds at most
// max_replicas entries however often Recommend() is called. Thread-safe: one
// mutex guards the map. Forget() racing with a Recommend() of the same
// object may leave that call's sample behind (the work queue never runs one
// key in two workers).
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "controller/autoscale/autoscaler.h"
#include "controller/autoscale/formula.h"
#include "controller/autoscale/metrics.h"
#include "controller/autoscale/poller.h"
#include "controller/autoscale/promql.h"
#include "shared/clock/clock.h"

namespace spdlog {
class logger;
}

namespace ms::autoscale {

inline constexpr std::chrono::seconds kDefaultStabilizationWindow{300};
// How often the same failed read of one object is logged at warning level.
inline constexpr std::chrono::seconds kWarnEvery{60};

struct AutoscalerOptions {
  // The queue query of each model server (Spec::queue_query), [0] the
  // default's (promql.h).
  std::vector<std::string> queue_query_templates{std::string(kDefaultQueryTemplate)};
  std::string gpu_query_template{kDefaultGpuQueryTemplate};  // promql.h
  // 0 (or negative): no stabilization, the answer is the call's raw one.
  clock::Clock::Duration stabilization_window = kDefaultStabilizationWindow;
  double tolerance = kDefaultTolerance;
  // A reading older than this is stale: no scale change (3 x the poll
  // interval by default: a value survives two missed polls).
  clock::Clock::Duration max_age = std::chrono::seconds(45);
};

class PrometheusAutoscaler final : public Autoscaler {
 public:
  // `readings`, `clock` and `metrics` must outlive the autoscaler. Reports
  // the L it uses in `metrics` (metrics.h; an object's series goes at
  // Forget). `logger` may be null (no logging).
  PrometheusAutoscaler(Readings& readings, const clock::Clock& clock, AutoscalerMetrics& metrics,
                       AutoscalerOptions options = {}, std::shared_ptr<spdlog::logger> logger = nullptr);

  Recommendation Recommend(const std::string& ns, const std::string& name, const Spec& spec,
                           int current_replicas) override;
  void Forget(const std::string& ns, const std::string& name) override;
  GpuUtilization Gpu(const std::string& ns, const std::string& name) override;
  void ForgetGpu(const std::string& ns, const std::string& name) override;

  // Number of objects with history (for tests and debugging).
  std::size_t TrackedObjects() const;

 private:
  struct Sample {
    clock::Clock::TimePoint at;
    int replicas;
  };
  using Key = std::pair<std::string, std::string>;

  Readings& readings_;
  std::vector<std::string> templates_;
  std::string gpu_template_;
  const clock::Clock& clock_;
  clock::Clock::Duration window_;
  double tolerance_;
  clock::Clock::Duration max_age_;
  std::shared_ptr<spdlog::logger> logger_;
  AutoscalerMetrics& metrics_;

  // The warning an object's failed read last logged: the same error is
  // logged again only after kWarnEvery (a reconcile can ask many times a
  // second), a different one at once; erased when a read succeeds (which
  // logs the recovery) and by Forget.
  struct Warned {
    std::string error;
    clock::Clock::TimePoint at;
  };
  // true when this failure should be logged at warning level.
  bool ShouldWarn(const Key& key, const std::string& error, clock::Clock::TimePoint now);
  // A value read within max_age, or why there is none.
  struct Fresh {
    std::optional<double> value;
    int series = 0;
    clock::Clock::WallTime at{};
    std::string why;  // when !value and !pending
    bool pending = false;
    std::string query;
  };
  Fresh ReadFresh(const MetricKey& key, const std::string& query);
  // No fresh value of `what`: replicas kept, the gauge NaN, a warning now and then.
  Recommendation Unreadable(const Key& key, const std::string& what, const Fresh& read, int current_replicas);
  // The formula(s), the tolerance and the window on fresh values.
  Recommendation Decide(const Key& key, const Spec& spec, int current_replicas, double l,
                        const std::optional<GpuUtilization>& u);
  // The mean of a GPU query's series (one per pod).
  static GpuUtilization Mean(const Fresh& f);
  // A fresh value: the gauge set, a recovery logged once.
  void Readable(const Key& key, double queue_length);
  // The highest recommendation within the stabilization window, `raw` included.
  int Stabilized(const Key& key, int raw);

  mutable std::mutex mu_;
  std::map<Key, std::deque<Sample>> history_;
  std::map<Key, Warned> warned_;
};

}  // namespace ms::autoscale
