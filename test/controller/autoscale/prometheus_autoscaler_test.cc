#include "controller/autoscale/prometheus_autoscaler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "shared/metrics/metrics.h"
#include "test/support/fake_clock.h"
#include "test/support/gate.h"

namespace ms::autoscale {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

// The poller's readings, set by the test: every watched key reads the
// reading set last (a per-query override allows several objects at once).
// Records the queries watched.
class FakeReadings final : public Readings {
 public:
  explicit FakeReadings(const clock::Clock& clock) : clock_(clock) {}
  void Watch(const MetricKey& key, const std::string& query) override {
    std::lock_guard<std::mutex> g(mu_);
    watched_[key] = query;
    queries_.push_back(query);
  }
  Reading Read(const MetricKey& key) const override {
    std::lock_guard<std::mutex> g(mu_);
    auto w = watched_.find(key);
    if (w == watched_.end()) return {};
    auto it = per_query_.find(w->second);
    Reading r = it != per_query_.end() ? it->second : next_;
    r.watched = true;
    return r;
  }
  void Forget(const MetricKey& key) override {
    std::lock_guard<std::mutex> g(mu_);
    watched_.erase(key);
  }
  // A value read now.
  Reading Value(double v) const {
    Reading r;
    r.value = v;
    r.value_at = clock_.Now();
    return r;
  }
  void Set(double v) { Set(Value(v)); }
  void Set(Reading r) {
    std::lock_guard<std::mutex> g(mu_);
    next_ = std::move(r);
  }
  // Nothing ever read: only an error.
  void SetError(const std::string& e) {
    Reading r;
    r.error = e;
    Set(r);
  }
  void SetFor(const std::string& query, Reading r) {
    std::lock_guard<std::mutex> g(mu_);
    per_query_[query] = std::move(r);
  }
  std::vector<std::string> queries() {
    std::lock_guard<std::mutex> g(mu_);
    return queries_;
  }
  size_t watched() {
    std::lock_guard<std::mutex> g(mu_);
    return watched_.size();
  }

 private:
  const clock::Clock& clock_;
  mutable std::mutex mu_;
  Reading next_;
  std::map<std::string, Reading> per_query_;
  std::map<MetricKey, std::string> watched_;
  std::vector<std::string> queries_;
};

class AutoscalerTest : public ::testing::Test {
 protected:
  AutoscalerTest() { Make(300s, 0.10); }

  void Make(clock::Clock::Duration window, double tolerance) {
    AutoscalerOptions o;
    o.stabilization_window = window;
    o.tolerance = tolerance;
    scaler_ = std::make_unique<PrometheusAutoscaler>(*source_, clock_, metrics_, o);
  }

  // One reconcile: reads L, and "applies" the answer as the new current
  // replica count, as the controller would.
  int Step(double l, const Spec& spec) {
    source_->Set(l);
    const Recommendation r = scaler_->Recommend("ns", "svc", spec, current_);
    EXPECT_TRUE(r.metrics_ok) << r.message;
    EXPECT_DOUBLE_EQ(r.queue_length, l);
    current_ = r.desired_replicas;
    return current_;
  }

  FakeClock clock_;
  std::unique_ptr<FakeReadings> source_ = std::make_unique<FakeReadings>(clock_);
  metrics::Registry registry_;
  AutoscalerMetrics metrics_{registry_};
  std::unique_ptr<PrometheusAutoscaler> scaler_;
  int current_ = 1;
  const Spec spec_{1, 10, 5};
};

TEST_F(AutoscalerTest, RendersTheQueryForTheObject) {
  source_->Set(0);
  scaler_->Recommend("team-a", "bert\"qa", spec_, 1);
  ASSERT_EQ(source_->queries().size(), 1u);
  EXPECT_EQ(source_->queries()[0], R"(sum(modelservice_queue_length{namespace="team-a",modelservice="bert\"qa"}))");
}

TEST_F(AutoscalerTest, ScalesUpAtOnce) {
  current_ = 1;
  EXPECT_EQ(Step(12, spec_), 3);
  EXPECT_EQ(Step(40, spec_), 8);
  clock_.Advance(1s);
  EXPECT_EQ(Step(1000, spec_), 10);  // max
  EXPECT_EQ(Step(0, spec_), 10);     // no time passed: held
}

TEST_F(AutoscalerTest, DipShorterThanTheWindowDoesNotScaleDown) {
  current_ = 1;
  EXPECT_EQ(Step(40, spec_), 8);
  for (int i = 0; i < 29; ++i) {  // 290 s of a low queue
    clock_.Advance(10s);
    EXPECT_EQ(Step(10, spec_), 8) << "after " << (i + 1) * 10 << " s";
  }
  clock_.Advance(10s);
  EXPECT_EQ(Step(40, spec_), 8);  // back up: never went down
  clock_.Advance(10s);
  EXPECT_EQ(Step(39, spec_), 8);
}

TEST_F(AutoscalerTest, SustainedDipScalesDownExactlyAfterTheWindow) {
  current_ = 1;
  EXPECT_EQ(Step(40, spec_), 8);  // t = 0
  for (int t = 10; t <= 290; t += 10) {
    clock_.Advance(10s);
    EXPECT_EQ(Step(10, spec_), 8) << "t=" << t;
  }
  clock_.Advance(10s);  // t = 300: the t=0 sample is at the window's edge
  EXPECT_EQ(Step(10, spec_), 8);
  clock_.Advance(1ms);  // t = 300.001: it has left
  EXPECT_EQ(Step(10, spec_), 2);
}

TEST_F(AutoscalerTest, ScalesDownToTheHighestRecommendationOfTheWindow) {
  current_ = 1;
  EXPECT_EQ(Step(40, spec_), 8);  // t = 0: 8
  clock_.Advance(100s);
  EXPECT_EQ(Step(30, spec_), 8);  // t = 100: raw 6
  clock_.Advance(100s);
  EXPECT_EQ(Step(20, spec_), 8);  // t = 200: raw 4
  clock_.Advance(50s);
  EXPECT_EQ(Step(5, spec_), 8);  // t = 250: raw 1
  clock_.Advance(51s);
  EXPECT_EQ(Step(5, spec_), 6);  // t = 301: 8 expired; max(6, 4, 1, 1)
  clock_.Advance(100s);
  EXPECT_EQ(Step(5, spec_), 4);  // t = 401: 6 expired
  clock_.Advance(49s);
  EXPECT_EQ(Step(5, spec_), 4);  // t = 450: 4 (t=200) still inside
  clock_.Advance(51s);
  EXPECT_EQ(Step(5, spec_), 1);  // t = 501
}

TEST_F(AutoscalerTest, MessageExplainsAHeldScaleDown) {
  current_ = 1;
  Step(40, spec_);
  clock_.Advance(10s);
  source_->Set(10);
  const Recommendation r = scaler_->Recommend("ns", "svc", spec_, 8);
  EXPECT_EQ(r.desired_replicas, 8);
  EXPECT_THAT(r.message, HasSubstr("queue length 10"));
  EXPECT_THAT(r.message, HasSubstr("2 replicas"));
  EXPECT_THAT(r.message, HasSubstr("held at 8"));
  EXPECT_THAT(r.message, HasSubstr("300s stabilization window"));
  EXPECT_TRUE(r.reason.empty());
}

TEST_F(AutoscalerTest, ToleranceStopsFlappingAroundTheThreshold) {
  const Spec spec{1, 20, 10};
  current_ = 4;
  // C*T = 40; +-10% keeps 4. Without tolerance 41..44 would mean 5.
  for (double l : {38.0, 42.0, 39.0, 44.0, 36.0, 41.0, 43.5}) {
    clock_.Advance(15s);
    EXPECT_EQ(Step(l, spec), 4) << "L=" << l;
  }
  clock_.Advance(15s);
  EXPECT_EQ(Step(45, spec), 5);  // 12.5% over: scale up at once
  // Now C = 5, C*T = 50: 46..54 keep 5.
  for (double l : {46.0, 54.0, 50.0, 47.0}) {
    clock_.Advance(15s);
    EXPECT_EQ(Step(l, spec), 5) << "L=" << l;
  }
}

TEST_F(AutoscalerTest, WithoutToleranceTheSameSequenceFlapsUp) {
  Make(300s, 0.0);
  const Spec spec{1, 20, 10};
  current_ = 4;
  clock_.Advance(15s);
  EXPECT_EQ(Step(38, spec), 4);
  clock_.Advance(15s);
  EXPECT_EQ(Step(42, spec), 5);
}

TEST_F(AutoscalerTest, ToleranceMessage) {
  const Spec spec{1, 20, 10};
  source_->Set(42);
  const Recommendation r = scaler_->Recommend("ns", "svc", spec, 4);
  EXPECT_EQ(r.desired_replicas, 4);
  EXPECT_THAT(r.message, HasSubstr("5 replicas"));
  EXPECT_THAT(r.message, HasSubstr("10% tolerance of 4 replicas"));
}

TEST_F(AutoscalerTest, UnavailableMetricsKeepCurrentAndDoNotTouchHistory) {
  current_ = 1;
  EXPECT_EQ(Step(40, spec_), 8);  // t = 0
  clock_.Advance(100s);
  source_->SetError("GET http://prom:9090 failed: Couldn't connect to server");
  Recommendation r = scaler_->Recommend("ns", "svc", spec_, 8);
  EXPECT_FALSE(r.metrics_ok);
  EXPECT_EQ(r.reason, "MetricsUnavailable");
  EXPECT_THAT(r.message, HasSubstr("Couldn't connect to server"));
  EXPECT_THAT(r.message, HasSubstr("modelservice_queue_length{namespace=\"ns\",modelservice=\"svc\"}"));
  EXPECT_THAT(r.message, HasSubstr("keeping 8 replicas"));
  EXPECT_EQ(r.desired_replicas, 8);

  source_->SetError("no series (the query returned an empty vector)");
  r = scaler_->Recommend("ns", "svc", spec_, 8);
  EXPECT_FALSE(r.metrics_ok);
  EXPECT_THAT(r.message, HasSubstr("no series"));

  // A source that returns a non-finite "value" is unavailable too.
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    source_->Set(bad);
    r = scaler_->Recommend("ns", "svc", spec_, 8);
    EXPECT_FALSE(r.metrics_ok);
    EXPECT_EQ(r.reason, "MetricsUnavailable");
    EXPECT_EQ(r.desired_replicas, 8);
  }

  clock_.Advance(100s);  // t = 200: the t=0 sample still holds 8
  current_ = 8;
  EXPECT_EQ(Step(10, spec_), 8);
  clock_.Advance(101s);  // t = 301: failures recorded nothing; max is 2
  EXPECT_EQ(Step(10, spec_), 2);
}

TEST_F(AutoscalerTest, AFailingReadIsWarnedOncePerMinuteAndItsRecoveryOnce) {
  std::ostringstream os;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(os);
  sink->set_pattern("%l %v");
  auto logger = std::make_shared<spdlog::logger>("autoscaler", sink);
  logger->set_level(spdlog::level::info);
  scaler_ = std::make_unique<PrometheusAutoscaler>(*source_, clock_, metrics_, AutoscalerOptions{}, logger);
  auto lines = [&] {
    logger->flush();
    std::vector<std::string> out;
    std::istringstream in(os.str());
    for (std::string l; std::getline(in, l);) out.push_back(l);
    os.str("");
    return out;
  };
  source_->SetError("no series");
  for (int i = 0; i < 130; ++i) {  // a reconcile asking twice a second for 65 s
    scaler_->Recommend("ns", "svc", spec_, 2);
    clock_.Advance(500ms);
  }
  auto got = lines();
  ASSERT_EQ(got.size(), 2u) << "at t = 0 and t = 60 s";
  EXPECT_THAT(got[0], ::testing::StartsWith("warning autoscaler ns/svc: cannot read the queue length"));
  EXPECT_THAT(got[0], HasSubstr("no series"));
  scaler_->Recommend("other", "svc", spec_, 2);  // another object is warned on its own
  source_->SetError("connection refused");       // a different error is warned at once
  scaler_->Recommend("ns", "svc", spec_, 2);
  scaler_->Recommend("ns", "svc", spec_, 2);
  got = lines();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_THAT(got[0], HasSubstr("other/svc"));
  EXPECT_THAT(got[1], HasSubstr("connection refused"));
  source_->Set(3);
  scaler_->Recommend("ns", "svc", spec_, 2);
  scaler_->Recommend("ns", "svc", spec_, 2);
  EXPECT_EQ(lines(), std::vector<std::string>{"info autoscaler ns/svc: the queue length is readable again"});
  source_->SetError("no series");  // failing again after a recovery is news
  scaler_->Recommend("ns", "svc", spec_, 2);
  EXPECT_EQ(lines().size(), 1u);
}

TEST_F(AutoscalerTest, ForgetDropsTheHistory) {
  current_ = 1;
  EXPECT_EQ(Step(40, spec_), 8);
  EXPECT_EQ(scaler_->TrackedObjects(), 1u);
  scaler_->Forget("ns", "svc");
  EXPECT_EQ(scaler_->TrackedObjects(), 0u);
  EXPECT_EQ(Step(10, spec_), 2);
  scaler_->Forget("ns", "nothing-here");  // harmless
  EXPECT_EQ(scaler_->TrackedObjects(), 1u);
}

TEST_F(AutoscalerTest, ObjectsHaveSeparateHistories) {
  const std::string qa = RenderQuery(kDefaultQueryTemplate, "a", "x");
  const std::string qb = RenderQuery(kDefaultQueryTemplate, "b", "x");
  source_->SetFor(qa, source_->Value(50));
  source_->SetFor(qb, source_->Value(5));
  EXPECT_EQ(scaler_->Recommend("a", "x", spec_, 1).desired_replicas, 10);
  EXPECT_EQ(scaler_->Recommend("b", "x", spec_, 1).desired_replicas, 1);
  source_->SetFor(qa, source_->Value(5));
  source_->SetFor(qb, source_->Value(50));
  clock_.Advance(10s);
  EXPECT_EQ(scaler_->Recommend("a", "x", spec_, 10).desired_replicas, 10);  // held
  EXPECT_EQ(scaler_->Recommend("b", "x", spec_, 1).desired_replicas, 10);   // up at once
  EXPECT_EQ(scaler_->TrackedObjects(), 2u);
  scaler_->Forget("a", "x");
  EXPECT_EQ(scaler_->Recommend("a", "x", spec_, 10).desired_replicas, 1);
  EXPECT_EQ(scaler_->Recommend("b", "x", spec_, 10).desired_replicas, 10);
}

TEST_F(AutoscalerTest, HistoryIsClampedByTheCurrentSpec) {
  current_ = 1;
  EXPECT_EQ(Step(50, spec_), 10);
  clock_.Advance(10s);
  // max lowered to 6 while 10 is in the window: the answer is 6, not 10.
  EXPECT_EQ(Step(0, Spec{1, 6, 5}), 6);
  // max raised to 9, min to 7: the 10 still in the window is clamped to 9.
  EXPECT_EQ(Step(0, Spec{7, 9, 5}), 9);
  clock_.Advance(291s);  // t = 301: the 10 has left; raw is min = 7
  EXPECT_EQ(Step(0, Spec{7, 9, 5}), 7);
}

TEST_F(AutoscalerTest, ZeroWindowScalesDownAtOnce) {
  Make(0s, 0.10);
  current_ = 1;
  EXPECT_EQ(Step(40, spec_), 8);
  EXPECT_EQ(Step(10, spec_), 2);
  Make(-5s, 0.10);  // negative: no stabilization either
  current_ = 1;
  EXPECT_EQ(Step(40, spec_), 8);
  EXPECT_EQ(Step(10, spec_), 2);
}

TEST_F(AutoscalerTest, ShortWindow) {
  Make(30s, 0.10);
  current_ = 1;
  EXPECT_EQ(Step(40, spec_), 8);
  clock_.Advance(30s);
  EXPECT_EQ(Step(10, spec_), 8);
  clock_.Advance(1s);
  EXPECT_EQ(Step(10, spec_), 2);
}

TEST_F(AutoscalerTest, ManyReadingsKeepTheExactWindowMaximum) {
  // A long pseudo-random sequence checked against a brute-force model of
  // "max over [now - W, now]".
  Make(300s, 0.0);
  const Spec spec{1, 100, 1};
  std::vector<std::pair<clock::Clock::TimePoint, int>> all;
  uint32_t x = 12345;
  for (int i = 0; i < 3000; ++i) {
    x = x * 1103515245u + 12345u;
    const int l = static_cast<int>((x >> 16) % 100) + 1;
    clock_.Advance(std::chrono::milliseconds(1000 + (x >> 8) % 20000));
    source_->Set(l);
    const int got = scaler_->Recommend("ns", "svc", spec, 0).desired_replicas;
    all.emplace_back(clock_.Now(), l);
    int want = 0;
    for (auto it = all.rbegin(); it != all.rend() && it->first >= clock_.Now() - 300s; ++it) {
      want = std::max(want, it->second);
    }
    ASSERT_EQ(got, want) << "step " << i;
  }
}

TEST_F(AutoscalerTest, MetricsGaugeAndCounters) {
  source_->Set(12);
  scaler_->Recommend("ns", "svc", spec_, 1);
  std::string text = metrics::Serialize(registry_);
  EXPECT_THAT(text, HasSubstr("modelservice_autoscaler_queue_length{name=\"svc\",namespace=\"ns\"} 12\n"));
  source_->SetError("down");
  scaler_->Recommend("ns", "svc", spec_, 3);
  text = metrics::Serialize(registry_);
  // prometheus-cpp spells NaN "Nan"; Prometheus reads it case-insensitively (Go's ParseFloat).
  EXPECT_THAT(text, HasSubstr("modelservice_autoscaler_queue_length{name=\"svc\",namespace=\"ns\"} Nan\n"));
  scaler_->Forget("ns", "svc");
  text = metrics::Serialize(registry_);
  EXPECT_THAT(text, ::testing::Not(HasSubstr("modelservice_autoscaler_queue_length{")));
}

// --per-object-metrics=false: the queue length of no ModelService is exported.
TEST_F(AutoscalerTest, WithoutPerObjectMetricsNoSeriesNamesTheModelService) {
  metrics::Registry registry;
  AutoscalerMetrics metrics(registry, /*per_object=*/false);
  PrometheusAutoscaler scaler(*source_, clock_, metrics, AutoscalerOptions{});
  source_->Set(12);
  EXPECT_EQ(scaler.Recommend("ns", "svc", spec_, 1).desired_replicas, 3);  // it still scales
  source_->SetError("down");
  scaler.Recommend("ns", "svc", spec_, 3);
  const std::string text = metrics::Serialize(registry);
  EXPECT_THAT(text, ::testing::Not(HasSubstr("modelservice_autoscaler_queue_length")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("name=\"svc\"")));
  EXPECT_THAT(text, HasSubstr("modelservice_autoscaler_queries_total"));
}

TEST_F(AutoscalerTest, ConcurrentWorkers) {
  source_->Set(23);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        // Each thread its own keys, as the work queue gives a key to one
        // worker at a time: a Forget never races a Recommend of its key.
        const std::string name = "svc-" + std::to_string(t * 4 + i % 4);
        const Recommendation r = scaler_->Recommend("ns", name, spec_, 1);
        if (!r.metrics_ok || r.desired_replicas != 5) ++wrong;
        if (i % 7 == 0) scaler_->Forget("ns", name);
        if (t == 0 && i % 50 == 0) clock_.Advance(1s);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(scaler_->TrackedObjects(), 16u);
}

TEST_F(AutoscalerTest, PendingUntilTheFirstAnswerKeepsReplicasAndIsNoError) {
  source_->Set(Reading{});  // watched, nothing answered yet
  const Recommendation r = scaler_->Recommend("ns", "svc", spec_, 4);
  EXPECT_FALSE(r.metrics_ok);
  EXPECT_TRUE(r.pending);
  EXPECT_TRUE(r.reason.empty());
  EXPECT_EQ(r.desired_replicas, 4);
  EXPECT_THAT(r.message,
              HasSubstr("waiting for the first answer from Prometheus (query: sum(modelservice_queue_length"));
  EXPECT_EQ(source_->watched(), 1u);
  scaler_->Forget("ns", "svc");
  EXPECT_EQ(source_->watched(), 0u) << "Forget stops the polling";
}

TEST_F(AutoscalerTest, AValueWithinTheBoundIsUsedWhenTheLatestAttemptFailed) {
  Reading r = source_->Value(40);
  r.error = "GET http://prom failed: Timeout was reached (timeout 5000 ms)";
  source_->Set(r);
  clock_.Advance(45s);  // the bound, exactly
  const Recommendation rec = scaler_->Recommend("ns", "svc", spec_, 1);
  EXPECT_TRUE(rec.metrics_ok) << rec.message;
  EXPECT_EQ(rec.desired_replicas, 8);
}

TEST_F(AutoscalerTest, AValueOlderThanTheBoundChangesNoReplicasAndSaysWhy) {
  current_ = 1;
  EXPECT_EQ(Step(40, spec_), 8);  // t = 0, stored in the window
  Reading r = source_->Value(5);  // would mean 1 replica
  r.error = "GET http://prom failed: Couldn't connect to server";
  source_->Set(r);
  clock_.Advance(400s);  // the window is over too: a fresh 5 would scale down to 1
  const Recommendation rec = scaler_->Recommend("ns", "svc", spec_, 8);
  EXPECT_FALSE(rec.metrics_ok);
  EXPECT_FALSE(rec.pending);
  EXPECT_EQ(rec.reason, "MetricsUnavailable");
  EXPECT_EQ(rec.desired_replicas, 8);
  EXPECT_EQ(rec.message,
            "cannot read the queue length from Prometheus: GET http://prom failed: Couldn't connect to server "
            "(query: " +
                RenderQuery(kDefaultQueryTemplate, "ns", "svc") + "); keeping 8 replicas");
  // Stale without an error (the poller is behind) says so.
  source_->Set(source_->Value(5));
  clock_.Advance(46s);
  const Recommendation behind = scaler_->Recommend("ns", "svc", spec_, 8);
  EXPECT_FALSE(behind.metrics_ok);
  EXPECT_THAT(behind.message, HasSubstr(": no value read in the last 45s (query: "));
}

// The Degraded message says the state of the world (Prometheus' answer),
// not what this process happens to remember: a controller that read values
// before Prometheus failed, and one started after (a restart, a new leader),
// which never read one, give the same message, so the new one rewrites no
// condition. Neither says how old the last value is, which changes with
// every reconcile.
TEST_F(AutoscalerTest, TheMessageOfAFailureIsTheSameInANewProcessAndAtAnyAge) {
  const std::string error = "GET http://prom failed: Couldn't connect to server";
  current_ = 1;
  EXPECT_EQ(Step(40, spec_), 8);
  Reading had_value = source_->Value(40);
  had_value.error = error;
  source_->Set(had_value);
  clock_.Advance(46s);
  const std::string old_process = scaler_->Recommend("ns", "svc", spec_, 8).message;
  clock_.Advance(600s);
  EXPECT_EQ(scaler_->Recommend("ns", "svc", spec_, 8).message, old_process) << "the same message at any age";

  FakeReadings fresh_readings(clock_);  // a new process: nothing read, the same failure
  fresh_readings.SetError(error);
  PrometheusAutoscaler fresh(fresh_readings, clock_, metrics_);
  const Recommendation rec = fresh.Recommend("ns", "svc", spec_, 8);
  EXPECT_FALSE(rec.pending);
  EXPECT_EQ(rec.message, old_process);
}

TEST_F(AutoscalerTest, TheBoundIsAnOption) {
  AutoscalerOptions o;
  o.max_age = 6s;
  scaler_ = std::make_unique<PrometheusAutoscaler>(*source_, clock_, metrics_, o);
  source_->Set(40);
  clock_.Advance(6s);
  EXPECT_TRUE(scaler_->Recommend("ns", "svc", spec_, 1).metrics_ok);
  clock_.Advance(1ms);
  EXPECT_FALSE(scaler_->Recommend("ns", "svc", spec_, 1).metrics_ok);
}

TEST_F(AutoscalerTest, TheGpuTargetCombinesWithTheQueueLengthAsTheHpaDoes) {
  const Spec spec{1, 10, 5, 60};
  const std::string queue = RenderQuery(kDefaultQueryTemplate, "ns", "svc");
  const std::string gpu = RenderQuery(kDefaultGpuQueryTemplate, "ns", "svc");
  source_->SetFor(queue, source_->Value(0));  // the queue alone: 1 replica
  Reading two_pods = source_->Value(180);     // 90% on each of 2 pods (one series each)
  two_pods.series = 2;
  source_->SetFor(gpu, two_pods);  // target 60%: 3
  Recommendation r = scaler_->Recommend("ns", "svc", spec, 2);
  ASSERT_TRUE(r.metrics_ok) << r.message;
  EXPECT_EQ(r.desired_replicas, 3);
  ASSERT_TRUE(r.gpu_utilization);
  EXPECT_EQ(*r.gpu_utilization, 90);
  EXPECT_THAT(r.message, HasSubstr("GPU utilization 90% on 2 pods, target 60%: 3 replicas"));
  // Scaled to 3, the new pod not reporting yet: still 3 (not ceil(3 x 1.5)).
  EXPECT_EQ(scaler_->Recommend("ns", "svc", spec, 3).desired_replicas, 3);
  source_->SetFor(queue, source_->Value(40));  // now the queue asks for more: 8
  EXPECT_EQ(scaler_->Recommend("ns", "svc", spec, 3).desired_replicas, 8);
  // Without the target the GPU utilization is not asked.
  source_->SetFor(queue, source_->Value(0));
  Make(0s, 0.10);
  EXPECT_EQ(scaler_->Recommend("ns", "svc", Spec{1, 10, 5}, 2).desired_replicas, 1);
}

TEST_F(AutoscalerTest, AnUnreadableGpuUtilizationKeepsTheReplicas) {
  const Spec spec{1, 10, 5, 60};
  source_->SetFor(RenderQuery(kDefaultQueryTemplate, "ns", "svc"), source_->Value(40));
  Reading none;
  none.error = "no series (the query returned an empty vector)";
  source_->SetFor(RenderQuery(kDefaultGpuQueryTemplate, "ns", "svc"), none);
  const Recommendation r = scaler_->Recommend("ns", "svc", spec, 2);
  EXPECT_FALSE(r.metrics_ok);
  EXPECT_EQ(r.reason, "MetricsUnavailable");
  EXPECT_EQ(r.desired_replicas, 2) << "the queue alone would say 8: no scale change on half the data";
  EXPECT_THAT(r.message, HasSubstr("cannot read the GPU utilization from Prometheus: no series"));
  EXPECT_THAT(r.message, HasSubstr("DCGM_FI_DEV_GPU_UTIL"));
}

TEST_F(AutoscalerTest, GpuUtilizationForTheStatus) {
  const std::string gpu = RenderQuery(kDefaultGpuQueryTemplate, "ns", "svc");
  EXPECT_EQ(gpu, R"(avg by (pod) (DCGM_FI_DEV_GPU_UTIL{namespace="ns",pod=~"svc-[a-z0-9]+-[a-z0-9]+"}))");
  source_->SetFor(gpu, Reading{});
  GpuUtilization g = scaler_->Gpu("ns", "svc");
  EXPECT_TRUE(g.pending);
  Reading two = source_->Value(175);  // two pods: 80 and 95
  two.series = 2;
  source_->SetFor(gpu, two);
  g = scaler_->Gpu("ns", "svc");
  EXPECT_FALSE(g.pending);
  ASSERT_TRUE(g.percent);
  EXPECT_EQ(*g.percent, 87.5);
  EXPECT_EQ(g.pods, 2);
  EXPECT_TRUE(g.message.empty());
  clock_.Advance(46s);  // stale
  g = scaler_->Gpu("ns", "svc");
  EXPECT_FALSE(g.percent);
  EXPECT_EQ(g.message,
            "cannot read the GPU utilization from Prometheus: no value read in the last 45s (query: " + gpu + ")");
  EXPECT_EQ(source_->watched(), 1u);
  scaler_->Forget("ns", "svc");
  EXPECT_EQ(source_->watched(), 1u) << "Forget is the queue length's";
  scaler_->ForgetGpu("ns", "svc");
  EXPECT_EQ(source_->watched(), 0u);
}

// With the real poller: a reconcile never waits for Prometheus, however long
// a query hangs (issue 23: a blackholed Prometheus held the workers).
TEST(AutoscalerWithPoller, RecommendNeverWaitsForAHangingQuery) {
  struct Hanging final : QuerySource {
    explicit Hanging(const FakeClock& c) : clock(c) {}
    QueryResult Query(const std::string&) override {
      gate.Pass();
      clock.Notify();
      return QueryResult::Value(23);
    }
    const FakeClock& clock;
    test::Gate gate{false};
  };
  FakeClock clock;
  auto source = std::make_shared<Hanging>(clock);
  metrics::Registry registry;
  AutoscalerMetrics metrics(registry);
  Poller poller(source, clock, PollerOptions{}, metrics);
  poller.Start();
  PrometheusAutoscaler scaler(poller, clock, metrics);
  const Spec spec{1, 10, 5};
  Recommendation r = scaler.Recommend("ns", "svc", spec, 2);
  ASSERT_TRUE(source->gate.AwaitHeld(1));                                    // the poller's query hangs...
  for (int i = 0; i < 100; ++i) r = scaler.Recommend("ns", "svc", spec, 2);  // ...the reconciles do not
  EXPECT_TRUE(r.pending);
  EXPECT_EQ(r.desired_replicas, 2);
  source->gate.Open();
  ASSERT_TRUE(clock.Eventually([&] { return scaler.Recommend("ns", "svc", spec, 2).metrics_ok; }));
  EXPECT_EQ(scaler.Recommend("ns", "svc", spec, 2).desired_replicas, 5);
  poller.Stop();
}

}  // namespace
}  // namespace ms::autoscale
