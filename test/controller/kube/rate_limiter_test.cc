#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "controller/kube/backoff.h"
#include "controller/kube/rate_limiter.h"
#include "test/support/fake_clock.h"

namespace ms::kube {
namespace {

using std::chrono::milliseconds;

TEST(KubeTokenBucket, BurstThenRefillAtQps) {
  FakeClock clock;
  TokenBucketRateLimiter rl(/*qps=*/2, /*burst=*/3, clock);
  EXPECT_TRUE(rl.TryAccept());
  EXPECT_TRUE(rl.TryAccept());
  EXPECT_TRUE(rl.TryAccept());
  EXPECT_FALSE(rl.TryAccept());  // burst spent
  clock.Advance(milliseconds(499));
  EXPECT_FALSE(rl.TryAccept());  // 0.998 tokens
  clock.Advance(milliseconds(1));
  EXPECT_TRUE(rl.TryAccept());  // one token per 1/qps = 500 ms
  EXPECT_FALSE(rl.TryAccept());
  clock.Advance(std::chrono::seconds(100));
  EXPECT_DOUBLE_EQ(rl.Tokens(), 3.0);  // capped at burst
}

TEST(KubeTokenBucket, ReserveBorrowsFromTheFuture) {
  FakeClock clock;
  TokenBucketRateLimiter rl(/*qps=*/20, /*burst=*/30, clock);
  for (int i = 0; i < 30; ++i) EXPECT_EQ(rl.Reserve(), clock::Clock::Duration::zero()) << i;
  // The 31st waits 1/20 s, the 32nd 2/20 s: requests are spaced at qps.
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(rl.Reserve()).count(), 50);
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(rl.Reserve()).count(), 100);
  clock.Advance(milliseconds(100));
  EXPECT_NEAR(rl.Tokens(), 0.0, 1e-9);
}

TEST(KubeTokenBucket, WaitBlocksUntilVirtualTimeAdvances) {
  FakeClock clock;
  TokenBucketRateLimiter rl(/*qps=*/1, /*burst=*/1, clock);
  ASSERT_TRUE(rl.Acquire());  // the one burst token
  std::atomic<bool> done{false};
  std::thread t([&] {
    rl.Acquire();
    done = true;
  });
  ASSERT_TRUE(clock.AwaitWaiters(1));  // waiting for the next token...
  EXPECT_FALSE(done.load());
  clock.Advance(milliseconds(999));
  ASSERT_TRUE(clock.AwaitWaiters(1));  // ...and still, 1 ms before it
  EXPECT_FALSE(done.load());
  clock.Advance(milliseconds(1));
  t.join();
  EXPECT_TRUE(done.load());
}

TEST(KubeTokenBucket, WaitReturnsFalseOnStop) {
  FakeClock clock;
  TokenBucketRateLimiter rl(1, 1, clock);
  rl.TryAccept();
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(rl.Acquire(std::nullopt, stop.get_token()));
}

TEST(KubeTokenBucket, ZeroQpsIsUnlimited) {
  FakeClock clock;
  TokenBucketRateLimiter rl(0, 1, clock);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(rl.TryAccept());
  EXPECT_EQ(rl.Reserve(), clock::Clock::Duration::zero());
}

TEST(KubeBackoff, DoublesToMaxAndResets) {
  Backoff b(milliseconds(200), std::chrono::seconds(30), /*jitter=*/0.0, 1);
  const int64_t expected[] = {200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000};
  for (int64_t e : expected) EXPECT_EQ(std::chrono::duration_cast<milliseconds>(b.Next()).count(), e);
  b.Reset();
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(b.Next()).count(), 200);
}

TEST(KubeBackoff, JitterStaysWithinBounds) {
  Backoff b(milliseconds(100), milliseconds(100), /*jitter=*/0.5, 42);
  bool varied = false;
  clock::Clock::Duration first = b.Next();
  for (int i = 0; i < 100; ++i) {
    auto d = b.Next();
    EXPECT_GE(d, milliseconds(100));
    EXPECT_LT(d, milliseconds(150));
    if (d != first) varied = true;
  }
  EXPECT_TRUE(varied);
}

}  // namespace
}  // namespace ms::kube
