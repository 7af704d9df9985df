#include "controller/modelservice/events.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "test/support/fake_clock.h"
#include "test/support/gate.h"
#include "test/support/log_capture.h"
#include "test/support/objects.h"
#include "test/support/verb_client.h"

namespace ms::modelservice {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// Records Event writes (and tells the clock, for tests that wait on
// them); every write passes `gate` first.
class EventsApi final : public test::VerbClient {
 public:
  explicit EventsApi(const FakeClock& clock) : clock_(clock) {}
  struct Call {
    std::string method, path;
    json body;
  };
  kube::Result OnCreate(const std::string& path, const json& body, kube::Deadline) override {
    return Answer("POST", path, body);
  }
  kube::Result OnPatch(const std::string& path, const json& body) override { return Answer("PATCH", path, body); }

  std::vector<Call> calls() {
    std::lock_guard<std::mutex> g(mu_);
    return calls_;
  }
  test::Gate gate;
  std::atomic<int> fail_next{0};  // answer this many writes with 503
  std::atomic<bool> patch_not_found{false};

 private:
  static kube::Result Fail(int code) { return {code, json(), kube::Status{code, "Fail", "fake"}}; }
  kube::Result Answer(const std::string& m, const std::string& path, const json& body) {
    gate.Pass();
    {
      std::lock_guard<std::mutex> g(mu_);
      calls_.push_back({m, path, body});
    }
    clock_.Notify();
    if (fail_next > 0) {
      --fail_next;
      return Fail(503);
    }
    if (m == "PATCH" && patch_not_found) return Fail(404);
    return {201, body, std::nullopt};
  }
  const FakeClock& clock_;
  std::mutex mu_;
  std::vector<Call> calls_;
};

json Ms(const std::string& name) { return test::ModelService().Name(name).Uid("uid-" + name).ResourceVersion("7"); }

TEST(KubeEventRecorder, WritesCoreV1EventsAndCountsRepeats) {
  FakeClock clock;
  EventsApi api(clock);
  KubeEventRecorder rec(api, clock, "host-1");
  rec.Record(Ms("bert"), Event{"Normal", "Created", "Create", "Created Deployment ml/bert"});
  rec.Record(Ms("bert"), Event{"Normal", "Created", "Create", "Created Deployment ml/bert"});
  rec.Flush();
  auto calls = api.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].method, "POST");
  EXPECT_EQ(calls[0].path, "/api/v1/namespaces/ml/events");
  const json& e = calls[0].body;
  EXPECT_EQ(e["apiVersion"], "v1");
  EXPECT_EQ(e["kind"], "Event");
  EXPECT_EQ(e["involvedObject"], json({{"apiVersion", "modelops.dev/v1"},
                                       {"kind", "ModelService"},
                                       {"name", "bert"},
                                       {"namespace", "ml"},
                                       {"uid", "uid-bert"},
                                       {"resourceVersion", "7"}}));
  EXPECT_EQ(e["reason"], "Created");
  EXPECT_EQ(e["type"], "Normal");
  EXPECT_EQ(e["count"], 1);
  EXPECT_EQ(e["source"], json({{"component", "modelservice-controller"}, {"host", "host-1"}}));
  EXPECT_EQ(e["reportingComponent"], "modelops.dev/modelservice-controller");
  // The repeat is a count on the same Event.
  EXPECT_EQ(calls[1].method, "PATCH");
  EXPECT_EQ(calls[1].path, "/api/v1/namespaces/ml/events/" + e["metadata"]["name"].get<std::string>());
  EXPECT_EQ(calls[1].body["count"], 2);
}

TEST(KubeEventRecorder, RecordNeverWaitsForTheApiAndDropsBeyondTheQueue) {
  FakeClock clock;
  EventsApi api(clock);
  api.gate.Close();  // the API hangs
  KubeEventRecorder rec(api, clock, "host-1", nullptr, /*max_queued=*/10);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 50; ++i) rec.Record(Ms("m" + std::to_string(i)), Event{"Normal", "Created", "Create", "x"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  // One in the writer's hands, 10 queued, the rest dropped.
  EXPECT_GE(rec.dropped(), 39u);
  api.gate.Open();
  rec.Flush();
  EXPECT_EQ(api.calls().size(), 50 - rec.dropped());
}

TEST(KubeEventRecorder, RetriesServerErrorsAndRecreatesDeletedEvents) {
  FakeClock clock;
  EventsApi api(clock);
  KubeEventRecorder rec(api, clock, "host-1");
  api.fail_next = 2;
  rec.Record(Ms("bert"), Event{"Warning", "CreateFailed", "Create", "422"});
  // Retries wait on the clock: 10 s apart, the first one randomized.
  ASSERT_TRUE(clock.AdvanceUntil([&] { return api.calls().size() >= 3; }, 1s));
  rec.Flush();
  ASSERT_EQ(api.calls().size(), 3u);
  // A count on an Event that was deleted meanwhile creates it again.
  api.patch_not_found = true;
  rec.Record(Ms("bert"), Event{"Warning", "CreateFailed", "Create", "422"});
  rec.Flush();
  auto calls = api.calls();
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_EQ(calls[3].method, "PATCH");
  EXPECT_EQ(calls[4].method, "POST");
  EXPECT_EQ(calls[4].body["count"], 2);
}

TEST(KubeEventRecorder, ShutdownWithoutDrainWritesNothingMore) {
  FakeClock clock;
  EventsApi api(clock);
  api.gate.Close();
  test::LogCapture log;
  auto rec = std::make_unique<KubeEventRecorder>(api, clock, "host-1", log.logger());
  for (int i = 0; i < 5; ++i) rec->Record(Ms("m" + std::to_string(i)), Event{"Normal", "Created", "Create", "x"});
  ASSERT_TRUE(api.gate.AwaitHeld(1));  // the writer holds the first event
  std::thread stopper([&] { rec->Shutdown(); });
  ASSERT_TRUE(log.AwaitLine("event recorder stopping: 4 queued events dropped"));
  api.gate.Open();  // the write in the writer's hands completes
  stopper.join();
  EXPECT_EQ(api.calls().size(), 1u);
  rec->Record(Ms("late"), Event{"Normal", "Created", "Create", "x"});  // ignored
  rec.reset();
  EXPECT_EQ(api.calls().size(), 1u);
}

}  // namespace
}  // namespace ms::modelservice
