// The Prometheus poller (poller.h) in virtual time: queries off the caller's
// thread, each key once per interval, the circuit breaker, readings and
// their changes.
#include "controller/autoscale/poller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "shared/metrics/metrics.h"
#include "test/support/fake_clock.h"
#include "test/support/gate.h"

namespace ms::autoscale {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

// Answers each query with what was set for it (else the default), after
// passing `gate`; records the queries and tells the clock.
class FakeSource final : public QuerySource {
 public:
  explicit FakeSource(const FakeClock& clock) : clock_(clock) {}
  QueryResult Query(const std::string& promql) override {
    gate.Pass();
    QueryResult r;
    {
      std::lock_guard<std::mutex> g(mu_);
      queries_.push_back(promql);
      auto it = per_query_.find(promql);
      r = it != per_query_.end() ? it->second : default_;
    }
    clock_.Notify();
    return r;
  }
  void Set(QueryResult r) {
    std::lock_guard<std::mutex> g(mu_);
    default_ = std::move(r);
  }
  void SetFor(const std::string& q, QueryResult r) {
    std::lock_guard<std::mutex> g(mu_);
    per_query_[q] = std::move(r);
  }
  std::vector<std::string> queries() const {
    std::lock_guard<std::mutex> g(mu_);
    return queries_;
  }
  size_t calls() const { return queries().size(); }

  test::Gate gate;

 private:
  const FakeClock& clock_;
  mutable std::mutex mu_;
  QueryResult default_ = QueryResult::Value(1);
  std::map<std::string, QueryResult> per_query_;
  std::vector<std::string> queries_;
};

class PollerTest : public ::testing::Test {
 protected:
  void Make(int threads = 1) {
    PollerOptions o;
    o.interval = 15s;
    o.threads = threads;
    o.breaker = BreakerOptions{3, 10s, 40s};
    poller_ = std::make_unique<Poller>(source_, clock_, o, metrics_);
    poller_->SetOnChange([this](const std::string& ns, const std::string& name) {
      {
        std::lock_guard<std::mutex> g(mu_);
        changes_.push_back(ns + "/" + name);
      }
      clock_.Notify();
    });
    poller_->Start();
  }
  ~PollerTest() override {
    source_->gate.Open();
    if (poller_) poller_->Stop();
  }
  static MetricKey Key(const std::string& name) { return {"ns", name, Metric::kQueueLength}; }
  std::vector<std::string> changes() {
    std::lock_guard<std::mutex> g(mu_);
    return changes_;
  }
  // The poller's thread has nothing to do at this time (it waits on the clock).
  void Idle(size_t threads = 1) { ASSERT_TRUE(clock_.AwaitWaiters(threads)); }

  FakeClock clock_;
  std::shared_ptr<FakeSource> source_ = std::make_shared<FakeSource>(clock_);
  metrics::Registry registry_;
  AutoscalerMetrics metrics_{registry_};
  std::unique_ptr<Poller> poller_;
  std::mutex mu_;
  std::vector<std::string> changes_;
};

TEST_F(PollerTest, ANewKeyIsReadAtOnceThenOncePerInterval) {
  Make();
  source_->Set(QueryResult::Value(7));
  EXPECT_FALSE(poller_->Read(Key("a")).watched);
  poller_->Watch(Key("a"), "q-a");
  ASSERT_TRUE(clock_.Eventually([&] { return changes().size() == 1; }));
  const Reading r = poller_->Read(Key("a"));
  EXPECT_TRUE(r.watched);
  ASSERT_TRUE(r.value);
  EXPECT_EQ(*r.value, 7);
  EXPECT_EQ(r.value_at, clock_.Now());
  EXPECT_EQ(r.value_wall, clock_.WallNow());
  EXPECT_TRUE(r.error.empty());
  EXPECT_EQ(changes(), std::vector<std::string>{"ns/a"});
  Idle();
  poller_->Watch(Key("a"), "q-a");  // the same query again: nothing new
  Idle();
  clock_.Advance(15s - 1ms);
  Idle();
  EXPECT_EQ(source_->calls(), 1u) << "not before the interval";
  clock_.Advance(1ms);
  ASSERT_TRUE(clock_.Eventually([&] { return source_->calls() == 2; }));
  Idle();
  EXPECT_EQ(changes().size(), 1u) << "the same value is no change";
  EXPECT_EQ(poller_->Read(Key("a")).value_at, clock_.Now());
  source_->Set(QueryResult::Value(9));
  clock_.Advance(15s);
  ASSERT_TRUE(clock_.Eventually([&] { return changes().size() == 2; }));
  EXPECT_EQ(*poller_->Read(Key("a")).value, 9);
  EXPECT_THAT(metrics::Serialize(registry_),
              HasSubstr("modelservice_autoscaler_queries_total{result=\"success\"} 3\n"));
}

TEST_F(PollerTest, ReadNeverWaitsForAQueryInFlight) {
  source_->gate.Close();  // Prometheus blackholed: the query hangs until its deadline
  Make();
  poller_->Watch(Key("a"), "q-a");
  ASSERT_TRUE(source_->gate.AwaitHeld(1));
  const Reading r = poller_->Read(Key("a"));  // answered while the query hangs
  EXPECT_TRUE(r.watched);
  EXPECT_FALSE(r.value);
  EXPECT_TRUE(r.error.empty());
  source_->Set(QueryResult::Unreachable("GET http://prom failed: Timeout was reached (timeout 5000 ms)"));
  source_->gate.Open();
  ASSERT_TRUE(clock_.Eventually([&] { return !poller_->Read(Key("a")).error.empty(); }));
  EXPECT_THAT(poller_->Read(Key("a")).error, HasSubstr("Timeout was reached"));
  EXPECT_EQ(changes(), std::vector<std::string>{"ns/a"}) << "the first answer, an error, is news";
}

TEST_F(PollerTest, TwoThreadsQueryTwoKeysAtOnceNeverOneKeyTwice) {
  source_->gate.Close();
  Make(2);
  poller_->Watch(Key("a"), "q-a");
  poller_->Watch(Key("b"), "q-b");
  ASSERT_TRUE(source_->gate.AwaitHeld(2));  // both in flight at once
  source_->gate.Open();
  ASSERT_TRUE(clock_.Eventually([&] { return changes().size() == 2; }));
  Idle(2);
  const auto q = source_->queries();
  EXPECT_EQ(std::count(q.begin(), q.end(), "q-a"), 1);
  EXPECT_EQ(std::count(q.begin(), q.end(), "q-b"), 1);
}

TEST_F(PollerTest, TheBreakerStopsQueriesAfterThreeFailuresAndProbesWithABackOff) {
  source_->Set(QueryResult::Unreachable("GET http://prom failed: Couldn't connect to server"));
  Make();
  for (const char* n : {"a", "b", "c", "d", "e"}) poller_->Watch(Key(n), std::string("q-") + n);
  ASSERT_TRUE(clock_.Eventually([&] { return poller_->breaker_state() == CircuitBreaker::State::kOpen; }));
  Idle();
  EXPECT_EQ(source_->calls(), 3u) << "three failures, then nothing";
  EXPECT_THAT(metrics::Serialize(registry_), HasSubstr("modelservice_autoscaler_circuit_breaker_open 1\n"));
  // A key never queried says why: what its query would say, the error that
  // keeps the breaker open, in the same words as a key that was queried
  // (nothing of the breaker's state, which a status message would carry).
  EXPECT_EQ(poller_->Read(Key("e")).error, "GET http://prom failed: Couldn't connect to server");
  EXPECT_EQ(poller_->Read(Key("a")).error, "GET http://prom failed: Couldn't connect to server");

  clock_.Advance(10s - 1ms);
  Idle();
  EXPECT_EQ(source_->calls(), 3u) << "no query during the back-off";
  clock_.Advance(1ms);  // the probe, which fails: 20 s
  ASSERT_TRUE(clock_.Eventually([&] { return source_->calls() == 4u; }));
  Idle();
  clock_.Advance(20s - 1ms);
  Idle();
  EXPECT_EQ(source_->calls(), 4u);
  source_->Set(QueryResult::Value(3));  // Prometheus is back
  clock_.Advance(1ms);
  ASSERT_TRUE(clock_.Eventually([&] {
    for (const char* n : {"a", "b", "c", "d", "e"})
      if (!poller_->Read(Key(n)).value) return false;
    return true;
  }));
  EXPECT_EQ(poller_->breaker_state(), CircuitBreaker::State::kClosed);
  EXPECT_TRUE(poller_->Read(Key("e")).error.empty());
  EXPECT_EQ(source_->calls(), 9u) << "3 failures, the failed probe, the probe that succeeds, the 4 other keys";
  Idle();
  EXPECT_THAT(metrics::Serialize(registry_), HasSubstr("modelservice_autoscaler_circuit_breaker_open 0\n"));
}

TEST_F(PollerTest, QueryErrorsThatPrometheusAnsweredDoNotOpenTheBreaker) {
  source_->Set(QueryResult::Error("no series (the query returned an empty vector)"));
  Make();
  for (const char* n : {"a", "b", "c", "d", "e"}) poller_->Watch(Key(n), std::string("q-") + n);
  ASSERT_TRUE(clock_.Eventually([&] { return source_->calls() == 5u; }));
  Idle();
  EXPECT_EQ(poller_->breaker_state(), CircuitBreaker::State::kClosed);
  EXPECT_THAT(poller_->Read(Key("e")).error, HasSubstr("no series"));
  EXPECT_EQ(changes().size(), 5u);
  EXPECT_THAT(metrics::Serialize(registry_), HasSubstr("modelservice_autoscaler_queries_total{result=\"error\"} 5\n"));
}

TEST_F(PollerTest, AFailureKeepsTheLastValueAndItsTime) {
  Make();
  source_->Set(QueryResult::Value(4));
  poller_->Watch(Key("a"), "q-a");
  ASSERT_TRUE(clock_.Eventually([&] { return changes().size() == 1; }));
  const clock::Clock::TimePoint read_at = clock_.Now();
  Idle();
  source_->Set(QueryResult::Error("no series"));
  clock_.Advance(15s);
  ASSERT_TRUE(clock_.Eventually([&] { return changes().size() == 2; }));
  Reading r = poller_->Read(Key("a"));
  EXPECT_EQ(*r.value, 4);
  EXPECT_EQ(r.value_at, read_at);
  EXPECT_EQ(r.error, "no series");
  Idle();
  source_->Set(QueryResult::Value(4));
  clock_.Advance(15s);
  ASSERT_TRUE(clock_.Eventually([&] { return changes().size() == 3; })) << "the error cleared is news";
  EXPECT_TRUE(poller_->Read(Key("a")).error.empty());
}

TEST_F(PollerTest, ANewQueryIsReadAtOnceAndAForgottenKeyNoMore) {
  Make();
  source_->SetFor("q1", QueryResult::Value(1));
  source_->SetFor("q2", QueryResult::Value(2));
  poller_->Watch(Key("a"), "q1");
  ASSERT_TRUE(clock_.Eventually([&] { return changes().size() == 1; }));
  Idle();
  poller_->Watch(Key("a"), "q2");
  ASSERT_TRUE(clock_.Eventually([&] { return changes().size() == 2; }));
  EXPECT_EQ(*poller_->Read(Key("a")).value, 2);
  Idle();
  poller_->Forget(Key("a"));
  EXPECT_EQ(poller_->Watched(), 0u);
  EXPECT_FALSE(poller_->Read(Key("a")).watched);
  clock_.Advance(1h);
  Idle();
  EXPECT_EQ(source_->queries(), (std::vector<std::string>{"q1", "q2"}));
}

TEST_F(PollerTest, AResultForAKeyForgottenMeanwhileIsDropped) {
  source_->gate.Close();
  Make();
  poller_->Watch(Key("a"), "q-a");
  ASSERT_TRUE(source_->gate.AwaitHeld(1));
  poller_->Forget(Key("a"));
  source_->gate.Open();
  ASSERT_TRUE(clock_.Eventually([&] { return source_->calls() == 1u; }));
  Idle();
  EXPECT_FALSE(poller_->Read(Key("a")).watched);
  EXPECT_TRUE(changes().empty());
}

// A key re-watched with another query while its query is in flight: the
// result of the old one is dropped and the new one is run at once after it.
TEST_F(PollerTest, AKeyReWatchedWhileInFlightRunsItsNewQueryNext) {
  source_->gate.Close();
  Make();
  poller_->Watch(Key("a"), "q1");
  ASSERT_TRUE(source_->gate.AwaitHeld(1));
  poller_->Watch(Key("a"), "q2");
  source_->gate.Open();
  ASSERT_TRUE(clock_.Eventually([&] { return source_->calls() == 2u; }));
  Idle();
  EXPECT_EQ(source_->queries(), (std::vector<std::string>{"q1", "q2"}));
  EXPECT_EQ(changes(), std::vector<std::string>{"ns/a"});  // q2's result only
}

// Keys come up in the order they are due, the most overdue first (ties by
// key), each once per interval however many are watched.
TEST_F(PollerTest, KeysAreQueriedInTheOrderTheyAreDue) {
  Make();
  size_t watched = 0;
  for (const char* name : {"c", "a", "b"}) {
    poller_->Watch(Key(name), std::string("q-") + name);
    ASSERT_TRUE(clock_.Eventually([&] { return source_->calls() == watched + 1; }));
    ++watched;
    Idle();
    clock_.Advance(1s);
  }
  EXPECT_EQ(source_->queries(), (std::vector<std::string>{"q-c", "q-a", "q-b"}));
  // Due again at 15, 16 and 17 s: all three overdue at 20 s, c first.
  clock_.Advance(20s - 3s);
  ASSERT_TRUE(clock_.Eventually([&] { return source_->calls() == 6u; }));
  Idle();
  EXPECT_EQ(source_->queries(), (std::vector<std::string>{"q-c", "q-a", "q-b", "q-c", "q-a", "q-b"}));
  poller_->Watch(Key("d"), "q-d");  // new: at once, before the others' next round
  ASSERT_TRUE(clock_.Eventually([&] { return source_->calls() == 7u; }));
  EXPECT_EQ(source_->queries().back(), "q-d");
}

TEST_F(PollerTest, StopReturnsWhileIdle) {
  Make(3);
  Idle(3);
  poller_->Stop();
  EXPECT_EQ(clock_.waiters(), 0u);
}

}  // namespace
}  // namespace ms::autoscale
