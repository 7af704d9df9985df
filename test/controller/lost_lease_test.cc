// Leadership fails closed (design.md §3, issue 13 §1): a controller with a
// full queue, its writes going through the real HTTP client to a local API
// stand-in, loses its Lease while two writes are in flight, and goes on
// asking for writes before its elector notices. From the moment of loss not
// one write reaches the server; the controller then stops without draining
// the queue, as main does.

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "controller/kube/curl_handles.h"
#include "controller/kube/http_client.h"
#include "controller/modelservice/events.h"
#include "controller/modelservice/executor.h"
#include "controller/modelservice/resources.h"
#include "controller/runtime/controller.h"
#include "controller/runtime/leader_election.h"
#include "controller/runtime/workqueue.h"
#include "test/support/fake_clock.h"
#include "test/support/http_test_server.h"
#include "test/support/mem_lease_store.h"
#include "test/support/notification.h"
#include "test/support/objects.h"
#include "test/support/unread_metrics.h"

namespace ms::modelservice {
namespace {

using runtime::LeaderElectionConfig;
using runtime::LeaderElectionMetrics;
using runtime::LeaderElector;
using runtime::ReconcileMetrics;
using runtime::WorkQueue;
using runtime::WorkQueueMetrics;

using nlohmann::json;
using std::chrono::seconds;

const kube::curl::GlobalInit kCurl;  // before any thread uses libcurl

json NewModelService(const std::string& name) {
  return test::ModelService().Name(name).Uid("uid-" + name).WholeSpec({{"model", "m"}, {"replicas", 1}});
}

// The ModelServices here have no spec.autoscaling: nothing asks for a recommendation.
class NotAutoscaled final : public autoscale::Autoscaler {
 public:
  autoscale::Recommendation Recommend(const std::string&, const std::string&, const autoscale::Spec&,
                                      int current) override {
    ADD_FAILURE() << "asked for a recommendation";
    return {false, "MetricsUnavailable", "not autoscaled", 0, current};
  }
  void Forget(const std::string&, const std::string&) override {}
  autoscale::GpuUtilization Gpu(const std::string&, const std::string&) override { return {}; }
  void ForgetGpu(const std::string&, const std::string&) override {}
};

// Writes asked for after the loss carry this annotation (added by
// AttemptsAfterLoss below), so that the stand-in tells them from a write
// that passed the gate before the loss and reaches the server a moment
// after it (the Event recorder's thread is a third writer beside the two
// workers, so one may be between the gate and the wire at the jump).
constexpr char kAskedAfterLoss[] = "test.modelops.dev/asked-after-loss";

// Answers every write as the API server would and holds the kLossAt-th one
// (and any that arrives meanwhile) until two are in flight at once: then
// the test's virtual clock jumps past the renew deadline (the moment of
// loss). Every write asked for after that moment that reaches the server is
// counted.
class ApiStandIn {
 public:
  static constexpr int kLossAt = 10;

  ApiStandIn(test::HttpTestServer& srv, FakeClock& clock, clock::Clock::Duration jump) : clock_(clock), jump_(jump) {
    auto write = [this](const httplib::Request& req, httplib::Response& res) { Write(req, res); };
    srv.server.Post(".*", write).Put(".*", write).Patch(".*", write).Delete(".*", write);
    srv.server.Get(".*", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> g(mu_);
      reads_++;
      res.status = 404;
      res.set_content(R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404})",
                      "application/json");
    });
  }

  int writes_before_loss() {
    std::lock_guard<std::mutex> g(mu_);
    return before_;
  }
  std::vector<std::string> writes_after_loss() {
    std::lock_guard<std::mutex> g(mu_);
    return after_;
  }
  bool lost() {
    std::lock_guard<std::mutex> g(mu_);
    return lost_;
  }

 private:
  void Write(const httplib::Request& req, httplib::Response& res) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (req.body.find(kAskedAfterLoss) != std::string::npos) {
        after_.push_back(req.method + " " + req.path);
      } else if (lost_) {
        ++in_transit_;  // sent before the loss, arrived after it
      } else {
        ++before_;
        ++in_flight_;
        cv_.notify_all();
        if (before_ == kLossAt) holding_ = true;
        if (holding_) {
          // Wait for the second worker's write (capped: a test that fails
          // should not hang), then declare the loss once.
          cv_.wait_for(lock, seconds(30), [this] { return in_flight_ >= 2 || lost_; });
          if (!lost_) {
            clock_.Advance(jump_);
            lost_ = true;
            cv_.notify_all();
          }
        }
        --in_flight_;
      }
    }
    json body = json::parse(req.body, nullptr, false);
    if (!body.is_object()) body = json::object();
    if (req.method == "PATCH") {  // the finalizer on the ModelService
      const std::string name = req.path.substr(req.path.rfind('/') + 1);
      json ms = NewModelService(name);
      ms["metadata"]["finalizers"] = body["metadata"].value("finalizers", json::array());
      body = ms;
    }
    body["metadata"]["resourceVersion"] = "2";
    res.status = req.method == "POST" ? 201 : 200;
    res.set_content(body.dump(), "application/json");
  }

  FakeClock& clock_;
  const clock::Clock::Duration jump_;
  std::mutex mu_;
  std::condition_variable cv_;
  int before_ = 0, in_flight_ = 0, reads_ = 0, in_transit_ = 0;
  bool holding_ = false, lost_ = false;
  std::vector<std::string> after_;
};

// The client the controller writes through, counting the writes it is asked
// for once the loss has happened (whether they are then sent or not).
class AttemptsAfterLoss final : public kube::Client {
 public:
  AttemptsAfterLoss(kube::Client& inner, ApiStandIn& api) : inner_(inner), api_(api) {}
  kube::Result Do(const kube::Call& call) override {
    if (!call.IsWrite()) return inner_.Do(call);
    // Counted; a DELETE has no body (no ModelService here is being deleted).
    const json marked = Mark(call.body != nullptr ? *call.body : json::object());
    return inner_.Do({call.verb, call.path, call.body != nullptr ? &marked : nullptr, call.deadline});
  }
  kube::Result Watch(const std::string& path, const kube::WatchHandler& on_event, std::stop_token stop) override {
    return inner_.Watch(path, on_event, stop);
  }
  // Waits (real time, capped) until `n` writes were asked for after the loss.
  bool WaitFor(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, seconds(30), [&] { return count_ >= n; });
  }

 private:
  // Counts a write asked for after the loss and marks its body.
  json Mark(const json& body) {
    if (!api_.lost()) return body;
    {
      std::lock_guard<std::mutex> g(mu_);
      ++count_;
      cv_.notify_all();
    }
    json marked = body.is_object() ? body : json::object();
    marked["metadata"]["annotations"][kAskedAfterLoss] = "true";
    return marked;
  }
  kube::Client& inner_;
  ApiStandIn& api_;
  std::mutex mu_;
  std::condition_variable cv_;
  int count_ = 0;
};

TEST(LostLease, FullQueueNoWriteLeavesAfterTheLoss) {
  FakeClock clock;
  test::MemLeaseStore store;
  LeaderElectionConfig lcfg;
  lcfg.name = "modelservice-controller";
  lcfg.ns = "ns";
  lcfg.identity = "a";
  LeaderElector elector(store, clock, lcfg, {}, test::Unread<LeaderElectionMetrics>());
  elector.Step();
  ASSERT_TRUE(elector.IsLeader());

  test::HttpTestServer srv;
  ApiStandIn api(srv, clock, lcfg.renew_deadline);
  srv.Start();
  kube::RestConfig rest;
  rest.server = srv.url();
  rest.qps = 0;
  kube::HttpClientOptions options;
  options.write_gate = &elector;  // as main wires it
  kube::HttpClient http(rest, clock, test::Unread<kube::ClientMetrics>(), nullptr, options);
  AttemptsAfterLoss client(http, api);

  constexpr int kObjects = 200;
  CachedReads cache;
  cache.model_service = [](const std::string& key) -> std::optional<json> {
    return NewModelService(key.substr(key.find('/') + 1));
  };
  cache.deployment = [](const std::string&) { return std::nullopt; };
  cache.service = [](const std::string&) { return std::nullopt; };
  KubeEventRecorder recorder(client, clock, "a");
  NotAutoscaled autoscaler;
  Expectations expectations(clock);
  Executor executor(client, recorder, autoscaler, expectations, clock, ExecutorOptions{},
                    test::Unread<ModelServiceMetrics>(), nullptr, cache);
  WorkQueue queue(kControllerName, clock, test::Unread<WorkQueueMetrics>());
  runtime::Controller controller({kControllerName, 2}, executor, queue, clock, test::Unread<ReconcileMetrics>());
  for (int i = 0; i < kObjects; ++i) queue.Add("ml/ms-" + std::to_string(i));
  controller.Start();

  // The stand-in jumps the clock past the renew deadline on the 10th write.
  // The elector has not noticed yet (as after a pause, or with its thread
  // stuck): the workers go on and ask for 20 more writes.
  ASSERT_TRUE(client.WaitFor(20));
  EXPECT_EQ(elector.WriteTimeLeft(), clock::Clock::Duration::zero());
  // Now the elector notices; the program aborts as main's Abort() does.
  elector.Step();
  EXPECT_EQ(elector.state(), LeaderElector::State::kLost);
  http.Close();
  queue.ShutDownNow();
  controller.Stop();

  srv.Stop();  // no handler outlives `api`

  EXPECT_TRUE(api.lost());
  EXPECT_EQ(api.writes_before_loss(), ApiStandIn::kLossAt + 1) << "the two writes in flight at the loss";
  EXPECT_EQ(api.writes_after_loss(), std::vector<std::string>{}) << "no write left the process after the loss";
  EXPECT_EQ(queue.Len(), 0u);
  EXPECT_EQ(queue.NumWaiting(), 0u);
  EXPECT_FALSE(queue.Get().has_value()) << "nothing is handed out after ShutDownNow";
}

}  // namespace
}  // namespace ms::modelservice
