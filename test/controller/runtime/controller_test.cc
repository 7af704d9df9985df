// The worker pool (controller.h) and the builder (builder.h), with a
// scripted Reconciler and sources whose events the test delivers.
#include "controller/runtime/controller.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "controller/runtime/builder.h"
#include "test/support/fake_clock.h"
#include "test/support/fake_source.h"
#include "test/support/unread_metrics.h"

namespace ms::runtime {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// Answers each Reconcile with the next scripted result (or throws when the
// script says so) and records the requests.
class ScriptedReconciler final : public Reconciler {
 public:
  std::deque<Result> script;
  bool throw_next = false;
  std::vector<Request> seen;

  Result Reconcile(const Request& request) override {
    seen.push_back(request);
    if (throw_next) {
      throw_next = false;
      throw std::runtime_error("boom");
    }
    Result r = script.front();
    script.pop_front();
    return r;
  }
};

struct PoolTest : ::testing::Test {
  FakeClock clock;
  metrics::Registry registry;
  ReconcileMetrics metrics{registry};
  WorkQueue queue{"things", clock, test::Unread<WorkQueueMetrics>()};
  ScriptedReconciler reconciler;
  Controller pool{{"things", 1}, reconciler, queue, clock, metrics};

  double Count(const std::string& result) {
    return metrics.total.Add({{"controller", "things"}, {"result", result}}).Value();
  }
};

TEST_F(PoolTest, EveryResultIsCountedAndActedOn) {
  EXPECT_EQ(Count("success"), 0) << "every result's series exists from the start";
  reconciler.script = {Result::Success(), Result::Error("no"), Result::Requeue(), Result::RequeueAfter(7s),
                       Result::Success(15s)};
  queue.Add("ns/a");
  ASSERT_TRUE(pool.ProcessNextItem());
  EXPECT_EQ(reconciler.seen.back(), (Request{"ns", "a"}));
  EXPECT_EQ(queue.Len() + queue.NumWaiting(), 0u) << "done: not queued again";

  queue.Add("ns/a");
  ASSERT_TRUE(pool.ProcessNextItem());  // an error: backoff
  EXPECT_EQ(queue.NumRequeues("ns/a"), 1);
  EXPECT_EQ(queue.NumWaiting(), 1u);
  EXPECT_EQ(metrics.errors.Add({{"controller", "things"}}).Value(), 1);

  queue.Add("ns/a");
  ASSERT_TRUE(pool.ProcessNextItem());  // requeue: backoff, no error
  EXPECT_EQ(queue.NumRequeues("ns/a"), 2);

  queue.Add("ns/a");
  ASSERT_TRUE(pool.ProcessNextItem());  // requeue after 7 s: the backoff is forgotten
  EXPECT_EQ(queue.NumRequeues("ns/a"), 0);
  clock.Advance(7s);
  ASSERT_TRUE(clock.Eventually([&] { return queue.Len() == 1; }));
  ASSERT_TRUE(pool.ProcessNextItem());  // success with a resync after 15 s
  EXPECT_EQ(queue.NumWaiting(), 1u);

  EXPECT_EQ(Count("success"), 2);
  EXPECT_EQ(Count("error"), 1);
  EXPECT_EQ(Count("requeue"), 1);
  EXPECT_EQ(Count("requeue_after"), 1);
  EXPECT_EQ(metrics.time.Add({{"controller", "things"}}, ReconcileMetrics::Buckets()).Collect().histogram.sample_count,
            5u);
}

TEST_F(PoolTest, WhatAReconcilerThrowsIsAnError) {
  reconciler.throw_next = true;
  queue.Add("cluster-scoped");
  ASSERT_TRUE(pool.ProcessNextItem());
  EXPECT_EQ(reconciler.seen.back(), (Request{"", "cluster-scoped"}));
  EXPECT_EQ(Count("error"), 1);
  EXPECT_EQ(metrics.panics.Add({{"controller", "things"}}).Value(), 1) << "controller_runtime_reconcile_panics_total";
  EXPECT_EQ(queue.NumRequeues("cluster-scoped"), 1);
}

// controller_runtime_active_workers counts the workers inside Reconcile;
// controller_runtime_max_concurrent_reconciles is the pool's size.
class GatedReconciler final : public Reconciler {
 public:
  Result Reconcile(const Request&) override {
    std::unique_lock<std::mutex> lock(mu);
    ++inside;
    cv.notify_all();
    cv.wait(lock, [&] { return open; });
    --inside;
    return Result::Success();
  }
  std::mutex mu;
  std::condition_variable cv;
  int inside = 0;
  bool open = false;
};

TEST(Pool, ActiveWorkersAndMaxConcurrentReconciles) {
  FakeClock clock;
  metrics::Registry registry;
  ReconcileMetrics metrics{registry};
  WorkQueue queue{"gated", clock, test::Unread<WorkQueueMetrics>()};
  GatedReconciler reconciler;
  Controller pool{{"gated", 3}, reconciler, queue, clock, metrics};
  auto active = [&] { return metrics.active_workers.Add({{"controller", "gated"}}).Value(); };
  EXPECT_EQ(metrics.max_concurrent.Add({{"controller", "gated"}}).Value(), 3);
  EXPECT_EQ(active(), 0);
  pool.Start();
  queue.Add("ns/a");
  queue.Add("ns/b");
  {
    std::unique_lock<std::mutex> lock(reconciler.mu);
    reconciler.cv.wait(lock, [&] { return reconciler.inside == 2; });
    EXPECT_EQ(active(), 2);
    reconciler.open = true;
  }
  reconciler.cv.notify_all();
  pool.Stop();
  EXPECT_EQ(active(), 0);
}

TEST_F(PoolTest, StopDrainsTheQueueAndJoinsTheWorkers) {
  reconciler.script = {Result::Success(), Result::Success()};
  queue.Add("ns/a");
  queue.Add("ns/b");
  pool.Start();
  pool.Stop();  // the keys already queued are still reconciled
  EXPECT_EQ(reconciler.seen.size(), 2u);
  EXPECT_TRUE(queue.ShuttingDown());
  EXPECT_FALSE(pool.ProcessNextItem());
}

json Object(const std::string& name, const std::string& owner = "") {
  json o = {{"metadata", {{"namespace", "ns"}, {"name", name}}}};
  if (!owner.empty()) o["owner"] = owner;
  return o;
}

TEST(Builder, WiresEachKindToTheQueueInOnePlace) {
  FakeClock clock;
  WorkQueue queue("things", clock, test::Unread<WorkQueueMetrics>());
  test::FakeSource things, parts, other;
  std::vector<std::string> observed;
  std::vector<std::string> other_events;
  Builder(queue)
      .Observe([&](const json& o, bool deleted) {
        observed.push_back((deleted ? "-" : "+") + o["metadata"]["name"].get<std::string>());
      })
      .For(things)
      .Owns(parts, [](const json& o) { return o.value("owner", ""); })
      .Watches(other, {[&](const json&) { other_events.push_back("add"); }, nullptr, nullptr})
      .Complete();
  ASSERT_EQ(things.handlers(), 1u);

  things.Add(Object("a"));
  parts.Add(Object("p1", "ns/b"));
  parts.Add(Object("p2"));                                   // no owner: nothing queued
  parts.Update(Object("p3", "ns/c"), Object("p3", "ns/d"));  // a new owner: both
  things.Delete(Object("e"));
  other.Add(Object("x"));

  std::vector<std::string> keys;
  while (queue.Len() > 0) {
    keys.push_back(*queue.Get());
    queue.Done(keys.back());
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"ns/a", "ns/b", "ns/d", "ns/c", "ns/e"}));
  EXPECT_EQ(observed, (std::vector<std::string>{"+a", "+p1", "+p2", "+p3", "-e"}))
      << "the observer sees For and Owns events, not Watches'";
  EXPECT_EQ(other_events, std::vector<std::string>{"add"});
}

}  // namespace
}  // namespace ms::runtime
