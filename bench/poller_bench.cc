// The Prometheus poller's cost per query as the number of autoscaled
// ModelServices grows (issue 48):
//
//   QueryAmong/N  one query among N watched keys, every key overdue (an
//                 interval of 0, a source that answers at once), one poller
//                 thread; the process' CPU time per query, so the poller's
//                 thread counts. The poller found the next key by scanning
//                 every watched one: O(N) per query, 10,000 entries looked
//                 at per query at 10,000 autoscaled ModelServices. Ordered
//                 by when they are due: O(log N).
//
// The time per query must not grow with N (bench/README.md, "Work queue
// and poller").
#include <benchmark/benchmark.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "controller/autoscale/metrics.h"
#include "controller/autoscale/poller.h"
#include "shared/clock/clock.h"
#include "shared/metrics/metrics.h"

namespace {

using ms::autoscale::Metric;
using ms::autoscale::QueryResult;

// Answers at once and counts; Await(n) returns once n queries were made.
class CountingSource final : public ms::autoscale::QuerySource {
 public:
  QueryResult Query(const std::string& /*promql*/) override {
    {
      std::lock_guard<std::mutex> g(mu_);
      ++calls_;
    }
    cv_.notify_all();
    return QueryResult::Value(1);
  }
  void Await(uint64_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return calls_ >= n; });
  }
  uint64_t calls() {
    std::lock_guard<std::mutex> g(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t calls_ = 0;
};

constexpr uint64_t kBatch = 64;  // queries per iteration

void QueryAmong(benchmark::State& state) {
  const int64_t n = state.range(0);
  ms::clock::SystemClock clock;
  ms::metrics::Registry registry;
  ms::autoscale::AutoscalerMetrics metrics(registry);
  auto source = std::make_shared<CountingSource>();
  ms::autoscale::PollerOptions o;
  o.interval = ms::clock::Clock::Duration::zero();
  o.threads = 1;
  ms::autoscale::Poller poller(source, clock, o, metrics);
  for (int64_t i = 0; i < n; ++i) poller.Watch({"bench", "m-" + std::to_string(i), Metric::kQueueLength}, "q");
  poller.Start();
  source->Await(static_cast<uint64_t>(n));  // every key read once
  uint64_t target = source->calls();
  for (auto _ : state) {
    target += kBatch;
    source->Await(target);
  }
  poller.Stop();
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBatch));
}
BENCHMARK(QueryAmong)->Arg(1000)->Arg(10000)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
