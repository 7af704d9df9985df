#include "controller/runtime/workqueue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "test/support/fake_clock.h"
#include "test/support/notification.h"
#include "test/support/unread_metrics.h"

namespace ms::runtime {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The queue's delay thread ends every pass by waiting on the clock: after
// AddAfter (which wakes it), a test waits for that wait before it moves time.
void AwaitDelayThread(const FakeClock& clock, uint64_t waits_before) {
  ASSERT_TRUE(clock.AwaitWaits(waits_before + 1));
}

TEST(WorkQueue, AddDeduplicates) {
  FakeClock clock;
  WorkQueue q("test", clock, test::Unread<WorkQueueMetrics>());
  q.Add("a");
  q.Add("b");
  q.Add("a");
  EXPECT_EQ(q.Len(), 2u);
  EXPECT_EQ(q.Get(), "a");
  EXPECT_EQ(q.Get(), "b");
  EXPECT_EQ(q.Len(), 0u);
}

TEST(WorkQueue, ReAddWhileProcessingIsQueuedAfterDone) {
  FakeClock clock;
  WorkQueue q("test", clock, test::Unread<WorkQueueMetrics>());
  q.Add("a");
  auto k = q.Get();
  ASSERT_EQ(k, "a");
  q.Add("a");
  q.Add("a");
  EXPECT_EQ(q.Len(), 0u) << "a key being processed must not be handed out again";
  q.Done("a");
  EXPECT_EQ(q.Len(), 1u);
  EXPECT_EQ(q.Get(), "a");
  q.Done("a");
  EXPECT_EQ(q.Len(), 0u);
}

TEST(WorkQueue, NoKeyInTwoWorkersAtOnce) {
  FakeClock clock;
  WorkQueue q("test", clock, test::Unread<WorkQueueMetrics>());
  constexpr int kKeys = 5;
  std::array<std::atomic<int>, kKeys> in_flight{};
  std::atomic<int> violations{0};
  std::atomic<int> processed{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (auto key = q.Get()) {
        const int i = (*key)[0] - 'a';
        if (in_flight[i].fetch_add(1) != 0) violations++;
        std::this_thread::yield();  // hold the key while other workers take theirs
        in_flight[i].fetch_sub(1);
        processed++;
        q.Done(*key);
      }
    });
  }
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < kKeys; ++i) q.Add(std::string(1, static_cast<char>('a' + i)));
  }
  q.ShutDownWithDrain();  // the workers take what is queued, then Get() ends
  for (auto& t : workers) t.join();
  EXPECT_EQ(q.Len(), 0u);
  EXPECT_EQ(violations.load(), 0);
  EXPECT_GE(processed.load(), kKeys);
}

TEST(WorkQueue, GetBlocksUntilAddOrShutDown) {
  FakeClock clock;
  WorkQueue q("test", clock, test::Unread<WorkQueueMetrics>());
  std::optional<std::string> result;
  // Get() on an empty queue returns only with a key or at shut down: the
  // answer "x" shows it waited for the Add, wherever the thread was then.
  std::thread t([&] { result = q.Get(); });
  q.Add("x");
  t.join();
  EXPECT_EQ(result, "x");

  std::thread t2([&] { result = q.Get(); });
  q.ShutDown();
  t2.join();
  EXPECT_FALSE(result.has_value());
}

TEST(WorkQueue, ShutDownHandsOutQueuedKeysThenStops) {
  FakeClock clock;
  WorkQueue q("test", clock, test::Unread<WorkQueueMetrics>());
  q.Add("a");
  q.ShutDown();
  q.Add("b");  // ignored
  EXPECT_TRUE(q.ShuttingDown());
  EXPECT_EQ(q.Get(), "a");
  EXPECT_EQ(q.Get(), std::nullopt);
}

TEST(WorkQueue, ShutDownNowDropsQueuedAndWaitingKeys) {
  FakeClock clock;
  WorkQueue q("test", clock, test::Unread<WorkQueueMetrics>());
  q.Add("a");
  q.Add("b");
  q.AddAfter("c", seconds(1));
  ASSERT_EQ(q.Get(), "a");
  q.Add("a");  // re-added while processing: would be queued again at Done()
  q.ShutDownNow();
  EXPECT_EQ(q.Len(), 0u);
  EXPECT_EQ(q.NumWaiting(), 0u);
  q.Done("a");
  clock.Advance(seconds(2));
  EXPECT_EQ(q.Get(), std::nullopt) << "b, c and the re-added a are dropped, not handed out";
}

TEST(WorkQueue, ShutDownWithDrainWaitsForInFlight) {
  FakeClock clock;
  WorkQueue q("test", clock, test::Unread<WorkQueueMetrics>());
  q.Add("a");
  ASSERT_EQ(q.Get(), "a");
  // The worker finishes "a" only once the drain has begun; the drain must
  // return after that, so it sees the worker's mark.
  test::Notification draining;
  std::atomic<bool> finished{false};
  std::thread worker([&] {
    ASSERT_TRUE(draining.Wait());
    finished = true;
    q.Done("a");
  });
  draining.Notify();
  q.ShutDownWithDrain();
  EXPECT_TRUE(finished.load()) << "the drain returned before the key in flight was done";
  worker.join();
}

TEST(WorkQueue, AddAfterInVirtualTime) {
  FakeClock clock;
  WorkQueue q("test", clock, test::Unread<WorkQueueMetrics>());
  const uint64_t waits = clock.waits();
  q.AddAfter("a", seconds(10));
  q.AddAfter("b", seconds(5));
  q.AddAfter("a", seconds(20));  // keeps the earlier time
  EXPECT_EQ(q.NumWaiting(), 2u);
  AwaitDelayThread(clock, waits);
  EXPECT_EQ(q.Len(), 0u);
  clock.Advance(seconds(5));
  ASSERT_TRUE(clock.Eventually([&] { return q.Len() == 1; }));
  EXPECT_EQ(q.Get(), "b");
  clock.Advance(seconds(4));  // a is due at 10 s: the delay thread is not woken...
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(q.Len(), 0u) << "...and a stays waiting";
  clock.Advance(seconds(1));
  ASSERT_TRUE(clock.Eventually([&] { return q.Len() == 1; }));
  EXPECT_EQ(q.Get(), "a");
  EXPECT_EQ(q.NumWaiting(), 0u);
}

// Keys come out when due, in the order they are due, however they were
// added; a key added again earlier moves up, added again later stays.
TEST(WorkQueue, ManyWaitingKeysComeOutInTheOrderTheyAreDue) {
  FakeClock clock;
  WorkQueue q("test", clock, test::Unread<WorkQueueMetrics>());
  const uint64_t waits = clock.waits();
  for (int i = 0; i < 100; ++i) q.AddAfter("k" + std::to_string(i), seconds(100 + (i * 37) % 100));
  q.AddAfter("k5", seconds(1));    // earlier: moves to the front
  q.AddAfter("k6", seconds(500));  // later: stays where it was
  EXPECT_EQ(q.NumWaiting(), 100u);
  AwaitDelayThread(clock, waits);
  clock.Advance(seconds(1));
  ASSERT_TRUE(clock.Eventually([&] { return q.Len() == 1; }));
  EXPECT_EQ(q.Get(), "k5");
  q.Done("k5");
  auto due_at = [](int i) { return 100 + (i * 37) % 100; };  // one key a second from 100 s to 199 s
  std::vector<std::string> order;
  for (int t = 100; t < 200; ++t) {
    clock.Advance(seconds(t == 100 ? 99 : 1));
    size_t still_waiting = 0;
    for (int i = 0; i < 100; ++i) still_waiting += (i != 5 && due_at(i) > t) ? 1 : 0;
    ASSERT_TRUE(clock.Eventually([&] { return q.NumWaiting() == still_waiting; })) << "at " << t << " s";
    while (q.Len() > 0) {
      order.push_back(*q.Get());
      q.Done(order.back());
    }
  }
  std::vector<std::string> want;
  for (int t = 100; t < 200; ++t) {
    for (int i = 0; i < 100; ++i) {
      if (i != 5 && due_at(i) == t) want.push_back("k" + std::to_string(i));
    }
  }
  EXPECT_EQ(order, want);
}

// One entry per key: an Add takes the place of the key's delayed add (the
// reconcile it starts returns its own requeue), and a delayed add of a key
// already queued adds nothing. A key being processed and not queued again
// still waits (the reconcile's own RequeueAfter).
TEST(WorkQueue, AnAddTakesThePlaceOfADelayedAdd) {
  FakeClock clock;
  WorkQueue q("test", clock, test::Unread<WorkQueueMetrics>());
  const uint64_t waits = clock.waits();
  q.AddAfter("a", seconds(30));
  q.AddAfter("b", seconds(30));
  EXPECT_EQ(q.NumWaiting(), 2u);
  q.Add("a");
  EXPECT_EQ(q.NumWaiting(), 1u) << "a is due now, not in 30 s as well";
  EXPECT_EQ(q.Len(), 1u);
  q.AddAfter("a", seconds(10));
  EXPECT_EQ(q.NumWaiting(), 1u) << "a is queued: a delayed add adds nothing";
  ASSERT_EQ(q.Get(), "a");
  q.AddAfter("a", seconds(30));  // the reconcile's own requeue, while processing
  q.Done("a");
  EXPECT_EQ(q.NumWaiting(), 2u);
  AwaitDelayThread(clock, waits);
  clock.Advance(seconds(30));
  ASSERT_TRUE(clock.Eventually([&] { return q.Len() == 2; }));
  EXPECT_EQ(q.NumWaiting(), 0u);
  EXPECT_EQ(q.Get(), "a");
  EXPECT_EQ(q.Get(), "b");
}

TEST(WorkQueue, AReAddWhileProcessingTakesThePlaceOfTheReconcilesRequeue) {
  FakeClock clock;
  WorkQueue q("test", clock, test::Unread<WorkQueueMetrics>());
  q.Add("a");
  ASSERT_EQ(q.Get(), "a");
  q.Add("a");                    // an event during the reconcile
  q.AddAfter("a", seconds(30));  // the reconcile's RequeueAfter
  EXPECT_EQ(q.NumWaiting(), 0u);
  q.Done("a");
  EXPECT_EQ(q.Len(), 1u);
}

TEST(WorkQueue, AddAfterZeroAddsNow) {
  FakeClock clock;
  WorkQueue q("test", clock, test::Unread<WorkQueueMetrics>());
  q.AddAfter("a", seconds(0));
  EXPECT_EQ(q.Len(), 1u);
}

TEST(RateLimiter, ExponentialBackoffSequenceCapped) {
  ItemExponentialFailureRateLimiter rl(milliseconds(5), seconds(1000));
  EXPECT_EQ(rl.When("a"), milliseconds(5));
  EXPECT_EQ(rl.When("a"), milliseconds(10));
  EXPECT_EQ(rl.When("a"), milliseconds(20));
  EXPECT_EQ(rl.When("a"), milliseconds(40));
  EXPECT_EQ(rl.When("b"), milliseconds(5)) << "per item";
  EXPECT_EQ(rl.NumRequeues("a"), 4);
  for (int i = 0; i < 30; ++i) rl.When("a");
  EXPECT_EQ(rl.When("a"), seconds(1000));
  EXPECT_EQ(rl.When("a"), seconds(1000));
  rl.Forget("a");
  EXPECT_EQ(rl.NumRequeues("a"), 0);
  EXPECT_EQ(rl.When("a"), milliseconds(5));
}

TEST(RateLimiter, TokenBucketBurstThenQps) {
  FakeClock clock;
  BucketRateLimiter rl(clock, 10.0, 100);
  // Keys appended, not `"x" + std::to_string(i)`: GCC 12 at -O3 reports a
  // false -Wrestrict in the insert() of operator+(const char*, string&&).
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(rl.When(std::string("x").append(std::to_string(i))), clock::Clock::Duration::zero()) << i;
  EXPECT_EQ(rl.When("y1"), milliseconds(100));
  EXPECT_EQ(rl.When("y2"), milliseconds(200));
  clock.Advance(seconds(1));  // 10 tokens refilled, debt was 2
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(rl.When(std::string("z").append(std::to_string(i))), clock::Clock::Duration::zero()) << i;
  EXPECT_EQ(rl.When("z9"), milliseconds(100));
}

TEST(RateLimiter, DefaultIsMaxOfBothAndQueueCountsRequeues) {
  FakeClock clock;
  auto rl = DefaultControllerRateLimiter(clock);
  EXPECT_EQ(rl->When("a"), milliseconds(5));
  EXPECT_EQ(rl->When("a"), milliseconds(10));
  for (int i = 0; i < 98; ++i) rl->When("other" + std::to_string(i));
  // Bucket exhausted: the 101st reservation waits 100 ms, more than a's 20 ms.
  EXPECT_EQ(rl->When("a"), milliseconds(100));
  EXPECT_EQ(rl->NumRequeues("a"), 3);
}

TEST(WorkQueue, AddRateLimitedBacksOffInVirtualTime) {
  FakeClock clock;
  metrics::Registry registry;
  WorkQueueMetrics m(registry);
  WorkQueue q("ms", clock, m);
  uint64_t waits = clock.waits();
  q.AddRateLimited("a");  // 5 ms
  EXPECT_EQ(q.NumRequeues("a"), 1);
  EXPECT_EQ(q.Len(), 0u);
  AwaitDelayThread(clock, waits);
  clock.Advance(milliseconds(5));
  ASSERT_TRUE(clock.Eventually([&] { return q.Len() == 1; }));
  ASSERT_EQ(q.Get(), "a");
  q.Done("a");
  waits = clock.waits();
  q.AddRateLimited("a");  // 10 ms
  AwaitDelayThread(clock, waits);
  clock.Advance(milliseconds(9));
  ASSERT_TRUE(clock.AwaitWaiters(1));
  EXPECT_EQ(q.Len(), 0u);
  clock.Advance(milliseconds(1));
  ASSERT_TRUE(clock.Eventually([&] { return q.Len() == 1; }));
  q.Forget("a");
  EXPECT_EQ(q.NumRequeues("a"), 0);

  EXPECT_EQ(m.retries.Add({{"name", "ms"}}).Value(), 2.0);
  EXPECT_EQ(m.adds.Add({{"name", "ms"}}).Value(), 2.0);
  EXPECT_EQ(m.depth.Add({{"name", "ms"}}).Value(), 1.0);
  const std::string text = metrics::Serialize(registry);
  EXPECT_NE(text.find("workqueue_queue_duration_seconds_count{name=\"ms\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("workqueue_work_duration_seconds_count{name=\"ms\"} 1"), std::string::npos) << text;
}

// workqueue_unfinished_work_seconds and _longest_running_processor_seconds
// are computed at each collection from the keys being processed (virtual
// time); a key that is Done no longer counts.
TEST(WorkQueue, UnfinishedWorkAndLongestRunningProcessor) {
  FakeClock clock;
  metrics::Registry registry;
  WorkQueueMetrics m(registry);
  WorkQueue q("ms", clock, m);
  auto scrape = [&] {
    const std::string text = metrics::Serialize(registry);
    auto value = [&](const std::string& series) {
      const size_t at = text.find(series + " ");
      return at == std::string::npos ? -1.0 : std::stod(text.substr(at + series.size() + 1));
    };
    return std::pair{value("workqueue_unfinished_work_seconds{name=\"ms\"}"),
                     value("workqueue_longest_running_processor_seconds{name=\"ms\"}")};
  };
  EXPECT_EQ(scrape(), (std::pair{0.0, 0.0}));
  q.Add("a");
  q.Add("b");
  ASSERT_EQ(q.Get(), "a");
  clock.Advance(std::chrono::seconds(3));
  EXPECT_EQ(scrape(), (std::pair{3.0, 3.0}));
  ASSERT_EQ(q.Get(), "b");
  clock.Advance(std::chrono::seconds(1));
  EXPECT_EQ(scrape(), (std::pair{5.0, 4.0}));  // a: 4 s, b: 1 s
  q.Done("a");
  EXPECT_EQ(scrape(), (std::pair{1.0, 1.0}));
  q.Done("b");
  EXPECT_EQ(scrape(), (std::pair{0.0, 0.0}));
}

}  // namespace
}  // namespace ms::runtime
