// A restart or a leader change costs no writes (issue 41, finding 8): a new
// controller process over converged ModelServices writes no status and
// emits no Event, whatever state they are in; here the hardest one, the
// autoscaled and GPU objects whose metrics cannot be read (Prometheus
// refuses connections, so the poller's circuit breaker opens, probes and
// opens again). The pieces a process holds (the poller, the autoscaler, the
// Event recorder's correlator, the write expectations) are made afresh; the
// API server and its stored objects are the same. Virtual time; the poller's
// own thread, synchronised on the clock.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "controller/autoscale/poller.h"
#include "controller/autoscale/prometheus_autoscaler.h"
#include "controller/modelservice/executor.h"
#include "controller/modelservice/metrics.h"
#include "controller/modelservice/resources.h"
#include "shared/metrics/metrics.h"
#include "test/controller/modelservice/fakes.h"
#include "test/support/fake_clock.h"
#include "test/support/gate.h"
#include "test/support/objects.h"

namespace ms::modelservice {
namespace {

using namespace std::chrono_literals;
using fakes::FakeApi;
using fakes::FakeRecorder;
using nlohmann::json;

constexpr auto kInterval = 15s;  // --autoscale-interval
const std::vector<std::string> kNames = {"auto-1", "auto-2", "auto-3", "auto-4", "auto-5", "gpu"};

// Prometheus down: every query is refused, after `gate`.
class RefusingPrometheus final : public autoscale::QuerySource {
 public:
  explicit RefusingPrometheus(const FakeClock& clock) : clock_(clock) {}
  autoscale::QueryResult Query(const std::string&) override {
    gate.Pass();
    clock_.Notify();
    return autoscale::QueryResult::Unreachable(
        "GET http://prometheus:9090 failed: Failed to connect to prometheus port 9090: Couldn't connect to server");
  }
  test::Gate gate;

 private:
  const FakeClock& clock_;
};

// What one controller process holds, as main.cc wires it.
struct Process {
  Process(FakeApi& api, FakeClock& clock, std::shared_ptr<autoscale::QuerySource> prometheus)
      : clock(clock),
        poller(std::move(prometheus), clock, PollerSettings(), autoscaler_metrics),
        autoscaler(poller, clock, autoscaler_metrics, AutoscalerSettings()),
        executor(api, recorder, autoscaler, expectations, clock, ExecutorSettings(), metrics) {
    poller.SetOnChange([this](const std::string& ns, const std::string& name) {
      {
        std::lock_guard<std::mutex> g(mu);
        changed.insert(ns + "/" + name);
      }
      this->clock.Notify();
    });
    poller.Start();
  }
  ~Process() { poller.Stop(); }

  static autoscale::PollerOptions PollerSettings() {
    autoscale::PollerOptions o;
    o.interval = kInterval;
    o.threads = 1;
    o.breaker.open_for = kInterval;
    o.breaker.max_open_for = 4 * kInterval;
    return o;
  }
  static autoscale::AutoscalerOptions AutoscalerSettings() {
    autoscale::AutoscalerOptions o;
    o.max_age = 3 * kInterval;
    return o;
  }
  static ExecutorOptions ExecutorSettings() {
    ExecutorOptions o;
    o.autoscale_interval = kInterval;
    return o;
  }
  // Every object reconciled once (the initial list, or a resync).
  void ReconcileAll() {
    for (const std::string& name : kNames) {
      const Report r = executor.Run({"ml", name});
      EXPECT_EQ(r.result.outcome, runtime::Result::Outcome::kSuccess) << name << ": " << r.result.error;
    }
  }
  // The objects whose reading changed since the last call (the poller's
  // on_change queues them), each reconciled.
  void ReconcileChanged() {
    std::set<std::string> keys;
    {
      std::lock_guard<std::mutex> g(mu);
      keys.swap(changed);
    }
    for (const std::string& key : keys) executor.Run({"ml", key.substr(key.find('/') + 1)});
  }
  // Every object has an answer or an error to read (none pending).
  bool AllRead() {
    for (const std::string& name : kNames) {
      if (!poller.Read({"ml", name, autoscale::Metric::kQueueLength}).error.empty()) continue;
      if (name == "gpu" && !poller.Read({"ml", name, autoscale::Metric::kGpuUtilization}).error.empty()) continue;
      return false;
    }
    return true;
  }
  // `rounds` autoscale intervals, in steps of a third of one: the poller's
  // queries, its breaker's back-off and probes, the objects it reports
  // changed and every object's resync.
  void Run(int rounds) {
    for (int step = 0; step < 3 * rounds; ++step) {
      clock.Advance(kInterval / 3);
      ASSERT_TRUE(clock.AwaitWaiters(1));  // the poller is idle again
      ReconcileChanged();
      if (step % 3 == 2) ReconcileAll();
    }
  }

  FakeClock& clock;
  FakeRecorder recorder;
  metrics::Registry registry;
  autoscale::AutoscalerMetrics autoscaler_metrics{registry};
  ModelServiceMetrics metrics{registry};
  Expectations expectations{clock};
  autoscale::Poller poller;
  autoscale::PrometheusAutoscaler autoscaler;
  Executor executor;
  std::mutex mu;
  std::set<std::string> changed;
};

std::string MsPath(const std::string& name) { return "/apis/modelops.dev/v1/namespaces/ml/modelservices/" + name; }
std::string DepPath(const std::string& name) { return "/apis/apps/v1/namespaces/ml/deployments/" + name; }

json Object(const std::string& name) {
  auto ms = test::ModelService().Name(name).Uid("uid-" + name).Defaulted();
  if (name == "gpu") return ms.Spec({{"gpus", 1}, {"image", "registry.local/serve:1.4"}});
  return ms.Autoscaling("Controller", 1, 10, 5);
}

// The Deployment controller: every owned Deployment rolled out.
void RollOut(FakeApi& api) {
  for (const std::string& name : kNames) {
    json& d = api.objects[DepPath(name)];
    const int replicas = d["spec"]["replicas"].get<int>();
    d["status"] = {{"observedGeneration", d["metadata"]["generation"]},
                   {"replicas", replicas},
                   {"updatedReplicas", replicas},
                   {"readyReplicas", replicas},
                   {"availableReplicas", replicas}};
  }
}

class Restart : public ::testing::Test {
 protected:
  // The first process converges every object with Prometheus down; what it
  // reports settles (Degraded MetricsUnavailable, the GPU message).
  void SetUp() override {
    for (const std::string& name : kNames) api.Put(MsPath(name), Object(name));
    Process first(api, clock, prometheus);
    first.ReconcileAll();  // the finalizer, the Deployment and Service, Progressing
    RollOut(api);
    first.ReconcileAll();
    ASSERT_TRUE(clock.Eventually([&] { return first.AllRead(); }));
    ASSERT_TRUE(clock.AwaitWaiters(1));
    first.Run(12);  // 3 minutes: the breaker opens, probes, backs off to 4 intervals
    ASSERT_TRUE(first.recorder.Has("MetricsUnavailable"));
    api.calls.clear();
    first.Run(12);
    ASSERT_EQ(api.Writes(), 0) << "the first process settled";
    for (const char* name : {"auto-1", "gpu"}) stored_[name] = api.objects[MsPath(name)]["status"];
    ASSERT_EQ(stored_["auto-1"]["phase"], "Degraded");
    ASSERT_TRUE(stored_["gpu"].contains("gpuUtilizationMessage"));
  }

  FakeClock clock;
  FakeApi api;
  std::shared_ptr<RefusingPrometheus> prometheus = std::make_shared<RefusingPrometheus>(clock);
  std::map<std::string, json> stored_;
};

TEST_F(Restart, ANewProcessOverConvergedObjectsWithPrometheusDownWritesNothing) {
  api.calls.clear();
  prometheus->gate.Close();  // no answer before every object was looked at once
  Process second(api, clock, prometheus);
  second.ReconcileAll();  // the initial list: every first reading is pending
  EXPECT_EQ(api.Writes(), 0) << "pending first readings keep the status";
  prometheus->gate.Open();
  ASSERT_TRUE(clock.Eventually([&] { return second.AllRead(); }));
  ASSERT_TRUE(clock.AwaitWaiters(1));
  second.ReconcileChanged();
  second.Run(12);  // the new poller's breaker opens, probes, backs off
  std::string writes;
  for (const auto& c : api.WritesList()) writes += c.method + " " + c.path + "\n";
  EXPECT_EQ(api.Writes(), 0) << writes;
  EXPECT_TRUE(second.recorder.events.empty())
      << second.recorder.events.front().reason << ": " << second.recorder.events.front().message;
  EXPECT_EQ(api.objects[MsPath("auto-1")]["status"], stored_["auto-1"]);
  EXPECT_EQ(api.objects[MsPath("gpu")]["status"], stored_["gpu"]);
}

}  // namespace
}  // namespace ms::modelservice
