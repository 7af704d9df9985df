// The Prometheus poller (design.md §3, issue 23 item 8): Prometheus is read
// off the reconcile workers. A reconcile says which query it wants for an
// object's metric (Watch) and takes the last reading and its age (Read),
// never waiting for Prometheus; the poller's threads run the watched
// queries, each once per `interval`, through the QuerySource (whose timeout
// is the per-query deadline), behind one circuit breaker (breaker.h).
//
// Rules:
//  - a newly watched key, or one whose query changed, is queried at once;
//    then every `interval` after the start of its previous query (a round
//    that takes longer than `interval` goes on with the most overdue key);
//  - one key is never queried by two threads at once; a result for a key
//    forgotten or re-watched with another query meanwhile is dropped (the
//    breaker still counts it);
//  - while the breaker is open nothing is queried; a reading then carries
//    the error of the failure that keeps it open (Reading::error: the words
//    a query would give now, not the breaker's state, so that a status
//    message built from it changes only when Prometheus' answer does) and
//    its value keeps its age;
//  - `on_change(ns, name)` is called (on a poller thread, no lock held) when
//    a key's reading changes: its first result, another value, another
//    error, or an error cleared;
//  - counted in AutoscalerMetrics: queries by result, the breaker's state.
// The keys not in flight are kept ordered by when they are due, so finding
// the next costs O(log N) among N watched (it scanned them all: at 10,000
// autoscaled ModelServices, 10,000 entries looked at for each query).
// Time comes from the Clock: tests drive the threads with FakeClock.
#pragma once

#include <compare>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "controller/autoscale/breaker.h"
#include "controller/autoscale/metrics.h"
#include "controller/autoscale/prometheus_client.h"
#include "shared/clock/clock.h"

namespace spdlog {
class logger;
}

namespace ms::autoscale {

enum class Metric { kQueueLength, kGpuUtilization };

struct MetricKey {
  std::string ns, name;
  Metric metric = Metric::kQueueLength;
  auto operator<=>(const MetricKey&) const = default;
};

// What is known of one key.
struct Reading {
  bool watched = false;
  std::optional<double> value;          // the last value read (finite)
  int series = 0;                       // how many series it sums (QueryResult::series)
  clock::Clock::TimePoint value_at{};   // when (monotonic), for its age
  clock::Clock::WallTime value_wall{};  // when (wall clock), for status timestamps
  // Why the last attempt failed, or, while the breaker is open, the error
  // that keeps it open; empty when the last attempt succeeded or none was
  // made yet. Never the breaker's state or a time: the same failure reads
  // the same in any process.
  std::string error;
};

// What the autoscaler reads (the Poller; a fake in tests).
class Readings {
 public:
  virtual ~Readings() = default;
  // From now on `query` is run for `key` (idempotent).
  virtual void Watch(const MetricKey& key, const std::string& query) = 0;
  virtual Reading Read(const MetricKey& key) const = 0;
  virtual void Forget(const MetricKey& key) = 0;
};

struct PollerOptions {
  clock::Clock::Duration interval = std::chrono::seconds(15);
  int threads = 2;
  BreakerOptions breaker;
};

class Poller final : public Readings {
 public:
  using OnChange = std::function<void(const std::string& ns, const std::string& name)>;

  // `source`, `clock` and `metrics` must outlive the poller.
  Poller(std::shared_ptr<QuerySource> source, const clock::Clock& clock, PollerOptions options,
         AutoscalerMetrics& metrics, std::shared_ptr<spdlog::logger> logger = nullptr);
  ~Poller() override;
  Poller(const Poller&) = delete;
  Poller& operator=(const Poller&) = delete;

  void SetOnChange(OnChange on_change);  // before Start()
  void Start();
  // Returns once every thread has left (a query in flight ends at its deadline).
  void Stop();

  void Watch(const MetricKey& key, const std::string& query) override;
  Reading Read(const MetricKey& key) const override;
  void Forget(const MetricKey& key) override;

  std::size_t Watched() const;
  CircuitBreaker::State breaker_state() const;

 private:
  struct Entry {
    std::string query;
    uint64_t generation = 0;  // bumped when the query changes
    clock::Clock::TimePoint due{};
    bool in_flight = false;
    Reading reading;
  };
  struct Job {
    MetricKey key;
    std::string query;
    uint64_t generation;
    clock::Clock::TimePoint started;
  };

  void Loop();
  // With mu_ held: the job to run now, or nullopt with `wake` set to when to look again.
  std::optional<Job> Next(clock::Clock::TimePoint now, clock::Clock::TimePoint& wake);
  // With mu_ held: records the result; true when the key's reading changed.
  bool Record(const Job& job, const QueryResult& result);
  void Publish();  // the breaker's state gauge, with mu_ held

  std::shared_ptr<QuerySource> source_;
  const clock::Clock& clock_;
  const PollerOptions options_;
  AutoscalerMetrics& metrics_;
  std::shared_ptr<spdlog::logger> logger_;
  OnChange on_change_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  uint64_t generations_ = 0;
  std::map<MetricKey, Entry> entries_;
  // The entries not in flight, by (due, key): the most overdue first, then
  // the lowest key.
  std::set<std::pair<clock::Clock::TimePoint, MetricKey>> due_;
  CircuitBreaker breaker_;
  std::vector<std::thread> threads_;
};

}  // namespace ms::autoscale
