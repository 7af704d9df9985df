// The circuit breaker (breaker.h): K failures open it, a back-off, one probe,
// doubling back-off, success closes.
#include "controller/autoscale/breaker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ms::autoscale {
namespace {

using namespace std::chrono_literals;
using State = CircuitBreaker::State;

class BreakerTest : public ::testing::Test {
 protected:
  clock::Clock::TimePoint t0_ = clock::Clock::TimePoint{} + 1h;
  CircuitBreaker b_{BreakerOptions{3, 10s, 40s}};
};

TEST_F(BreakerTest, ClosedUntilKConsecutiveFailures) {
  EXPECT_TRUE(b_.Allow(t0_));
  b_.Failure(t0_, "e1");
  b_.Failure(t0_, "e2");
  EXPECT_EQ(b_.state(), State::kClosed);
  EXPECT_TRUE(b_.Allow(t0_));
  EXPECT_TRUE(b_.Why().empty());
  b_.Failure(t0_, "e3");
  EXPECT_EQ(b_.state(), State::kOpen);
  EXPECT_FALSE(b_.Allow(t0_));
  EXPECT_FALSE(b_.Allow(t0_ + 10s - 1ms));
  EXPECT_EQ(b_.open_until(), t0_ + 10s);
  EXPECT_THAT(b_.Why(), ::testing::HasSubstr("after 3 consecutive failures"));
  EXPECT_THAT(b_.Why(), ::testing::EndsWith("the last: e3"));
}

TEST_F(BreakerTest, ASuccessInBetweenResetsTheCount) {
  b_.Failure(t0_, "e");
  b_.Failure(t0_, "e");
  b_.Success();
  b_.Failure(t0_, "e");
  b_.Failure(t0_, "e");
  EXPECT_EQ(b_.state(), State::kClosed);
}

TEST_F(BreakerTest, OneProbeAfterTheBackOffThenDoublingUpToTheMaximum) {
  for (int i = 0; i < 3; ++i) b_.Failure(t0_, "down");
  clock::Clock::TimePoint t = t0_;
  for (clock::Clock::Duration backoff : {10s, 20s, 40s, 40s}) {
    ASSERT_EQ(b_.open_until(), t + backoff);
    t += backoff;
    EXPECT_TRUE(b_.Allow(t)) << "the probe";
    EXPECT_EQ(b_.state(), State::kHalfOpen);
    EXPECT_FALSE(b_.Allow(t)) << "only one probe at a time";
    b_.Failure(t, "still down");
    EXPECT_EQ(b_.state(), State::kOpen);
  }
  EXPECT_THAT(b_.Why(), ::testing::EndsWith("the last: still down"));
}

TEST_F(BreakerTest, AProbeThatSucceedsClosesAndResetsTheBackOff) {
  for (int i = 0; i < 3; ++i) b_.Failure(t0_, "down");
  ASSERT_TRUE(b_.Allow(t0_ + 10s));
  b_.Failure(t0_ + 10s, "down");  // back-off 20 s
  ASSERT_TRUE(b_.Allow(t0_ + 30s));
  b_.Success();
  EXPECT_EQ(b_.state(), State::kClosed);
  EXPECT_TRUE(b_.Allow(t0_ + 30s));
  for (int i = 0; i < 3; ++i) b_.Failure(t0_ + 31s, "down");
  EXPECT_EQ(b_.open_until(), t0_ + 41s) << "back to the first back-off";
}

TEST_F(BreakerTest, FailuresOfQueriesStartedBeforeItOpenedAreNotCounted) {
  for (int i = 0; i < 3; ++i) b_.Failure(t0_, "down");
  b_.Failure(t0_ + 5s, "late");
  EXPECT_EQ(b_.open_until(), t0_ + 10s);
  EXPECT_THAT(b_.Why(), ::testing::EndsWith("the last: down"));
}

TEST(Breaker, NonsenseOptionsAreNormalised) {
  CircuitBreaker b(BreakerOptions{0, 0s, -1s});
  const clock::Clock::TimePoint t{};
  b.Failure(t, "e");  // failures < 1 count as 1
  EXPECT_EQ(b.state(), State::kOpen);
  EXPECT_GT(b.open_until(), t);
}

}  // namespace
}  // namespace ms::autoscale
