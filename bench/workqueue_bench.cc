// The work queue's cost per key as the number of keys grows (issue 48):
//
//   AddAfterAmongWaiting/N  one key requeued after 30 s (what a reconcile
//                           that finds its own write not yet in the cache
//                           returns, runtime::Result::RequeueAfter of the
//                           expectations' time to live) while N others
//                           wait; the process' CPU time, so the delay
//                           thread's work counts too. Each key is due after
//                           those before it, as in a burst. The queue kept
//                           the waiting keys in a map by key and woke its
//                           delay thread at every AddAfter to scan them all
//                           for the earliest: O(N) per key. Ordered by when
//                           they are due, only a key due before every other
//                           wakes it: O(log N). Each add is followed by a
//                           pause of 50 us (no CPU time), as the requeues
//                           of a burst come one reconcile apart: added
//                           back to back, the old queue's wake-ups fold
//                           into one scan and hide its cost.
//   AddGetDone/N            one key through Add, Get and Done with N other
//                           keys queued: the dedup and processing sets.
//   OwnWriteRequeue/N       a burst's key as the reconciler sees it: its
//                           first reconcile writes, finds the cache behind its
//                           write and returns RequeueAfter 30 s (the
//                           expectations' time to live); the watch event of
//                           the write adds the key again and the second
//                           reconcile converges. Counter `pending_per_key`:
//                           the delayed adds still waiting afterwards, each
//                           a third reconcile 30 s later that finds nothing
//                           to do. The queue kept both entries (1 per key:
//                           in a burst longer than 30 s, such reconciles run
//                           inside it, so the CPU per object grew with N
//                           from 1,000 to 10,000); with one entry per key
//                           the event's Add takes the delayed add's place (0).
//
// The time per key must not grow with N (bench/README.md, "Work queue").
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>
#include <thread>

#include "controller/runtime/metrics.h"
#include "controller/runtime/workqueue.h"
#include "shared/clock/clock.h"
#include "shared/metrics/metrics.h"

namespace {

using ms::runtime::WorkQueue;
using ms::runtime::WorkQueueMetrics;

std::string Key(const char* prefix, int64_t i) { return std::string("bench/") + prefix + std::to_string(i); }

void AddAfterAmongWaiting(benchmark::State& state) {
  const int64_t n = state.range(0);
  ms::clock::SystemClock clock;
  ms::metrics::Registry registry;
  WorkQueueMetrics m(registry);
  WorkQueue q("bench", clock, m);
  for (int64_t i = 0; i < n; ++i) q.AddAfter(Key("waiting-", i), std::chrono::seconds(30));
  int64_t i = 0;
  for (auto _ : state) {
    q.AddAfter(Key("new-", i++), std::chrono::seconds(30));
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  state.counters["waiting"] = static_cast<double>(q.NumWaiting());
}
// A fixed number of keys added, so that the queue holds about N throughout.
// CPU time, not real time: the pauses are not the queue's cost.
BENCHMARK(AddAfterAmongWaiting)->Arg(1000)->Arg(10000)->Iterations(2000)->MeasureProcessCPUTime();

void AddGetDone(benchmark::State& state) {
  const int64_t n = state.range(0);
  ms::clock::SystemClock clock;
  ms::metrics::Registry registry;
  WorkQueueMetrics m(registry);
  WorkQueue q("bench", clock, m);
  for (int64_t i = 0; i < n; ++i) q.Add(Key("queued-", i));
  // Each round: one key in at the back, the front one out and done.
  int64_t i = 0;
  for (auto _ : state) {
    q.Add(Key("new-", i++));
    q.Done(*q.Get());
  }
}
BENCHMARK(AddGetDone)->Arg(1000)->Arg(10000)->MeasureProcessCPUTime()->UseRealTime();

void OwnWriteRequeue(benchmark::State& state) {
  const int64_t n = state.range(0);
  ms::clock::SystemClock clock;
  ms::metrics::Registry registry;
  WorkQueueMetrics m(registry);
  int64_t keys = 0;
  for (auto _ : state) {
    state.PauseTiming();
    WorkQueue burst("burst", clock, m);
    state.ResumeTiming();
    for (int64_t i = 0; i < n; ++i) {
      const std::string key = Key("burst-", i);
      burst.Add(key);
      const std::string first = *burst.Get();
      burst.AddAfter(first, std::chrono::seconds(30));  // behind its own write
      burst.Done(first);
      burst.Add(key);  // the write's watch event
      burst.Done(*burst.Get());
    }
    state.PauseTiming();
    keys += n;
    state.counters["pending_per_key"] = static_cast<double>(burst.NumWaiting()) / static_cast<double>(n);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(keys);
}
BENCHMARK(OwnWriteRequeue)->Arg(1000)->Arg(10000)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
