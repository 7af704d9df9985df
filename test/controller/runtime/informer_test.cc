#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "controller/kube/client.h"
#include "controller/kube/status.h"
#include "controller/runtime/informer.h"
#include "test/support/fake_clock.h"
#include "test/support/gate.h"
#include "test/support/verb_client.h"

namespace ms::runtime {
namespace {

using namespace std::chrono_literals;
using kube::Client;
using kube::PatchType;
using kube::Result;
using kube::Status;
using kube::TransportError;
using kube::WatchEvent;
using nlohmann::json;

json Obj(const std::string& name, const std::string& rv, const std::string& ns = "ns") {
  return {{"metadata", {{"name", name}, {"namespace", ns}, {"resourceVersion", rv}}}};
}

Result Page(std::vector<json> items, const std::string& rv, const std::string& cont = "") {
  Result r;
  r.code = 200;
  r.body = {
      {"kind", "DeploymentList"}, {"apiVersion", "apps/v1"}, {"metadata", {{"resourceVersion", rv}}}, {"items", items}};
  if (!cont.empty()) r.body["metadata"]["continue"] = cont;
  return r;
}

Result Ok() {
  Result r;
  r.code = 200;
  return r;
}

Result Transport() {
  Result r;
  r.error = TransportError("Failed to connect to 127.0.0.1 port 6443: Connection refused");
  return r;
}

Result HttpError(int code, const std::string& reason) {
  Result r;
  r.code = code;
  r.error = Status{code, reason, reason};
  return r;
}

WatchEvent Ev(const std::string& type, json obj) { return WatchEvent{type, std::move(obj)}; }

// A scripted Client: List pops the next scripted answer; Watch pops the next
// script, delivers its events and returns its result. With nothing scripted,
// Watch blocks until stopped (a quiet stream) and List fails.
class FakeClient final : public test::VerbClient {
 public:
  struct WatchScript {
    std::vector<WatchEvent> events;
    Result result = Ok();
  };

  explicit FakeClient(const FakeClock& clock) : clock_(clock) {}

  void AddList(Result r) {
    std::lock_guard<std::mutex> g(mu_);
    lists_.push_back(std::move(r));
  }
  void AddWatch(WatchScript s) {
    std::lock_guard<std::mutex> g(mu_);
    watches_.push_back(std::move(s));
  }
  std::vector<std::string> list_paths() const {
    std::lock_guard<std::mutex> g(mu_);
    return list_paths_;
  }
  std::vector<std::string> watch_paths() const {
    std::lock_guard<std::mutex> g(mu_);
    return watch_paths_;
  }
  std::vector<clock::Clock::TimePoint> watch_times() const {
    std::lock_guard<std::mutex> g(mu_);
    return watch_times_;
  }
  std::vector<clock::Clock::TimePoint> list_times() const {
    std::lock_guard<std::mutex> g(mu_);
    return list_times_;
  }

  Result OnList(const std::string& path) override {
    std::lock_guard<std::mutex> g(mu_);
    list_paths_.push_back(path);
    list_times_.push_back(clock_.Now());
    clock_.Notify();
    if (lists_.empty()) return Transport();
    Result r = std::move(lists_.front());
    lists_.pop_front();
    return r;
  }
  Result Watch(const std::string& path, const kube::WatchHandler& on_event, std::stop_token stop) override {
    WatchScript script;
    bool quiet = false;
    {
      std::lock_guard<std::mutex> g(mu_);
      watch_paths_.push_back(path);
      watch_times_.push_back(clock_.Now());
      clock_.Notify();
      if (watches_.empty()) {
        quiet = true;
      } else {
        script = std::move(watches_.front());
        watches_.pop_front();
      }
    }
    if (quiet) {  // until the informer stops it
      std::mutex m;
      std::unique_lock<std::mutex> lock(m);
      std::condition_variable_any().wait(lock, stop, [] { return false; });
      return Ok();
    }
    for (const auto& e : script.events) {
      if (!on_event(e)) break;
    }
    return script.result;
  }

 private:
  const FakeClock& clock_;
  mutable std::mutex mu_;
  std::deque<Result> lists_;
  std::deque<WatchScript> watches_;
  std::vector<std::string> list_paths_, watch_paths_;
  std::vector<clock::Clock::TimePoint> list_times_, watch_times_;
};

// Records handler calls as "add ns/a@rv", "update ns/a@1->2", "delete ns/b@rv"
// (on the handler's thread; each call tells the clock, for Eventually()).
class Recorder {
 public:
  explicit Recorder(const FakeClock& clock) : clock_(clock) {}
  EventHandler Handler() {
    return EventHandler{
        [this](const json& o) { Push("add " + Key(o)); },
        [this](const json& a, const json& b) {
          Push("update " + Key(a) + "->" + b["metadata"]["resourceVersion"].get<std::string>());
        },
        [this](const json& o) { Push("delete " + Key(o)); },
    };
  }
  std::vector<std::string> calls() const {
    std::lock_guard<std::mutex> g(mu_);
    return calls_;
  }
  size_t size() const {
    std::lock_guard<std::mutex> g(mu_);
    return calls_.size();
  }

 private:
  static std::string Key(const json& o) {
    return o["metadata"].value("namespace", "") + "/" + o["metadata"]["name"].get<std::string>() + "@" +
           o["metadata"].value("resourceVersion", "");
  }
  void Push(std::string s) {
    {
      std::lock_guard<std::mutex> g(mu_);
      calls_.push_back(std::move(s));
    }
    clock_.Notify();
  }
  const FakeClock& clock_;
  mutable std::mutex mu_;
  std::vector<std::string> calls_;
};

class KubeInformerTest : public ::testing::Test {
 protected:
  InformerOptions Options() {
    InformerOptions o;
    o.backoff_jitter = 0;
    o.seed = 7;
    return o;
  }
  // Runs `inf` until the returned thread is destroyed (stop requested, then
  // joined): declare it after the informer, so it stops first.
  static std::jthread Start(Informer& inf) {
    return std::jthread([&inf](std::stop_token stop) { inf.Run(stop); });
  }

  // Until `cond` holds: the fakes tell the clock of every call.
  bool Eventually(const std::function<bool()>& cond) { return clock_.Eventually(cond); }
  // Until `n` handler calls were recorded (on the informer's thread).
  bool Handled(size_t n) {
    return clock_.Eventually([&] { return rec_.size() >= n; });
  }

  FakeClock clock_;
  FakeClient client_{clock_};
  Recorder rec_{clock_};
};

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Which of `keys` the informer's cache holds.
std::vector<std::string> Cached(const Informer& inf, std::vector<std::string> keys) {
  std::vector<std::string> out;
  for (auto& k : keys) {
    if (inf.Get(k)) out.push_back(k);
  }
  return out;
}

TEST_F(KubeInformerTest, PagedListThenWatchEvents) {
  client_.AddList(Page({Obj("a", "3"), Obj("b", "4")}, "10", "tok/en+1"));
  client_.AddList(Page({Obj("c", "5")}, "10"));
  client_.AddWatch(
      {{Ev("ADDED", Obj("d", "11")), Ev("MODIFIED", Obj("a", "12")), Ev("DELETED", Obj("b", "13"))}, Ok()});
  Informer inf(client_, clock_, nullptr, "/apis/apps/v1/deployments", "", "", Options());
  inf.AddEventHandler(rec_.Handler());
  EXPECT_FALSE(inf.HasSynced());
  std::jthread run = Start(inf);
  ASSERT_TRUE(Eventually([&] { return inf.HasSynced(); }));
  ASSERT_TRUE(Eventually([&] { return client_.watch_paths().size() >= 2; }));

  const auto lists = client_.list_paths();
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(lists[0], "/apis/apps/v1/deployments?limit=100");
  EXPECT_EQ(lists[1], "/apis/apps/v1/deployments?limit=100&continue=tok%2Fen%2B1");

  const auto watches = client_.watch_paths();
  EXPECT_TRUE(Contains(watches[0], "/apis/apps/v1/deployments?watch=true&allowWatchBookmarks=true&resourceVersion=10"))
      << watches[0];
  const auto pos = watches[0].find("timeoutSeconds=");
  ASSERT_NE(pos, std::string::npos);
  const int timeout = std::stoi(watches[0].substr(pos + 15));
  EXPECT_GE(timeout, 300);
  EXPECT_LT(timeout, 600);
  // The stream ended normally: re-watch from the last event's resourceVersion.
  EXPECT_TRUE(Contains(watches[1], "resourceVersion=13")) << watches[1];
  EXPECT_EQ(client_.list_paths().size(), 2u);  // no relist

  ASSERT_TRUE(Handled(6));
  EXPECT_EQ(rec_.calls(), (std::vector<std::string>{"add ns/a@3", "add ns/b@4", "add ns/c@5", "add ns/d@11",
                                                    "update ns/a@3->12", "delete ns/b@13"}));
  EXPECT_EQ(Cached(inf, {"ns/a", "ns/b", "ns/c", "ns/d"}), (std::vector<std::string>{"ns/a", "ns/c", "ns/d"}));
  EXPECT_EQ(inf.LastResourceVersion(), "13");
  auto a = inf.Get("ns/a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ((*a)["metadata"]["resourceVersion"], "12");
  // List items got the kind and apiVersion of their list.
  auto c = inf.Get("ns/c");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ((*c)["kind"], "Deployment");
  EXPECT_EQ((*c)["apiVersion"], "apps/v1");
  EXPECT_FALSE(inf.Get("ns/b").has_value());
}

// After the first page, each asks for as many items as fit the budget's
// bytes at the bytes per item of the page before: small objects come in a
// few large pages, large ones in small pages; a relist starts from what
// the last list learned.
TEST_F(KubeInformerTest, PagesHoldAsManyItemsAsFitTheBudget) {
  auto sized = [](Result r, std::size_t bytes) {
    r.body_bytes = bytes;
    return r;
  };
  client_.AddList(sized(Page({Obj("a", "3"), Obj("b", "4")}, "10", "p2"), 2 * 1000));  // 1,000 bytes an item
  client_.AddList(sized(Page({Obj("c", "5")}, "10", "p3"), 400'000));                  // 400,000 bytes an item
  client_.AddList(sized(Page({Obj("d", "6")}, "10"), 0));                              // size not known: keep
  client_.AddWatch({{}, HttpError(410, "Expired")});                                   // relist
  client_.AddList(sized(Page({Obj("d", "6")}, "11"), 500));
  InformerOptions o = Options();
  o.pages = PageBudget{.first = 50, .bytes = 1'000'000, .max = 600};
  Informer inf(client_, clock_, nullptr, "/apis/apps/v1/deployments", "", "", o);
  std::jthread run = Start(inf);
  ASSERT_TRUE(Eventually([&] { return client_.list_paths().size() >= 4; }));
  EXPECT_EQ(
      client_.list_paths(),
      (std::vector<std::string>{"/apis/apps/v1/deployments?limit=50",
                                "/apis/apps/v1/deployments?limit=600&continue=p2",  // 1,000 capped at max
                                "/apis/apps/v1/deployments?limit=2&continue=p3", "/apis/apps/v1/deployments?limit=2"}));
}

// A page larger than the client takes (kReasonTooLarge) is asked for again
// with half as many items, at once (no backoff), and the rest of the list
// goes on at that size: whatever tenants store, a page fits.
TEST_F(KubeInformerTest, APageTooLargeIsAskedForAgainWithHalfAsManyItems) {
  auto too_large = [] {
    Result r;
    r.error = Status{0, kube::kReasonTooLarge, "response larger than 33554432 bytes"};
    return r;
  };
  client_.AddList(too_large());
  client_.AddList(too_large());
  client_.AddList(Page({Obj("a", "3")}, "10", "next"));
  client_.AddList(too_large());
  client_.AddList(Page({Obj("b", "4")}, "10"));
  InformerOptions o = Options();
  o.pages.first = 40;
  Informer inf(client_, clock_, nullptr, "/apis/apps/v1/deployments", "", "", o);
  std::jthread run = Start(inf);
  ASSERT_TRUE(Eventually([&] { return inf.HasSynced(); }));
  EXPECT_EQ(client_.list_paths(),
            (std::vector<std::string>{"/apis/apps/v1/deployments?limit=40", "/apis/apps/v1/deployments?limit=20",
                                      "/apis/apps/v1/deployments?limit=10",
                                      "/apis/apps/v1/deployments?limit=10&continue=next",
                                      "/apis/apps/v1/deployments?limit=5&continue=next"}));
  // Synced with the clock never advanced: no backoff wait between them.
  EXPECT_EQ(Cached(inf, {"ns/a", "ns/b"}), (std::vector<std::string>{"ns/a", "ns/b"}));
}

// Handlers run on the watch's thread (Run()'s), in order, every handler each
// delta before the next: when OnSynced() is called, each has handled the
// first list's adds; a handler that blocks holds up the watch until it returns.
TEST_F(KubeInformerTest, HandlersRunOnTheWatchThreadAndSyncFollowsTheListsAdds) {
  client_.AddList(Page({Obj("a", "3")}, "10"));
  client_.AddWatch(
      {{Ev("ADDED", Obj("b", "11")), Ev("MODIFIED", Obj("a", "12")), Ev("DELETED", Obj("b", "13"))}, Ok()});
  Informer inf(client_, clock_, nullptr, "/apis/apps/v1/deployments", "", "", Options());
  test::Gate gate(false);
  std::mutex mu;
  std::vector<std::thread::id> threads;
  inf.AddEventHandler({[&](const json&) {
                         {
                           std::lock_guard<std::mutex> g(mu);
                           threads.push_back(std::this_thread::get_id());
                         }
                         gate.Pass();
                       },
                       nullptr, nullptr});
  inf.AddEventHandler(rec_.Handler());
  std::vector<std::string> at_sync;
  inf.OnSynced([&] { at_sync = rec_.calls(); });
  std::thread::id run_thread;
  std::jthread run([&](std::stop_token stop) {
    run_thread = std::this_thread::get_id();
    inf.Run(stop);
  });
  ASSERT_TRUE(gate.AwaitHeld(1));
  EXPECT_EQ(rec_.size(), 0u) << "the second handler waits for the first";
  EXPECT_FALSE(inf.HasSynced());
  gate.Open();
  ASSERT_TRUE(Handled(4));
  EXPECT_EQ(rec_.calls(),
            (std::vector<std::string>{"add ns/a@3", "add ns/b@11", "update ns/a@3->12", "delete ns/b@13"}));
  EXPECT_EQ(at_sync, std::vector<std::string>{"add ns/a@3"});
  EXPECT_TRUE(inf.HasSynced());
  run.request_stop();
  run.join();
  std::lock_guard<std::mutex> g(mu);
  EXPECT_EQ(threads, (std::vector<std::thread::id>{run_thread, run_thread}));
}

TEST_F(KubeInformerTest, BookmarkUpdatesResourceVersionWithoutHandlerCalls) {
  client_.AddList(Page({Obj("a", "3")}, "10"));
  client_.AddWatch({{Ev("BOOKMARK", {{"kind", "Deployment"}, {"metadata", {{"resourceVersion", "20"}}}})}, Ok()});
  Informer inf(client_, clock_, nullptr, "/apis/apps/v1/deployments", "", "", Options());
  inf.AddEventHandler(rec_.Handler());
  std::jthread run = Start(inf);
  ASSERT_TRUE(Eventually([&] { return client_.watch_paths().size() >= 2; }));
  EXPECT_TRUE(Contains(client_.watch_paths()[1], "resourceVersion=20")) << client_.watch_paths()[1];
  EXPECT_EQ(inf.LastResourceVersion(), "20");
  ASSERT_TRUE(Handled(1));
  EXPECT_EQ(rec_.calls(), (std::vector<std::string>{"add ns/a@3"}));
  EXPECT_EQ(Cached(inf, {"ns/a"}), (std::vector<std::string>{"ns/a"}));
}

TEST_F(KubeInformerTest, GoneErrorEventRelistsAndDeliversDeletesForVanishedObjects) {
  client_.AddList(Page({Obj("a", "3"), Obj("b", "4"), Obj("same", "2")}, "10"));
  client_.AddWatch({{Ev("ERROR", {{"kind", "Status"},
                                  {"status", "Failure"},
                                  {"message", "too old resource version: 10 (50)"},
                                  {"reason", "Expired"},
                                  {"code", 410}}),
                     Ev("ADDED", Obj("never", "99"))},  // not applied: the stream ends at the ERROR
                    Ok()});
  client_.AddList(Page({Obj("a", "7"), Obj("c", "8"), Obj("same", "2")}, "50"));
  Informer inf(client_, clock_, nullptr, "/apis/apps/v1/deployments", "", "", Options());
  inf.AddEventHandler(rec_.Handler());
  std::jthread run = Start(inf);
  ASSERT_TRUE(Eventually([&] { return client_.watch_paths().size() >= 2; }));
  EXPECT_EQ(client_.list_paths().size(), 2u);
  EXPECT_TRUE(Contains(client_.watch_paths()[1], "resourceVersion=50"));
  ASSERT_TRUE(Handled(6));
  EXPECT_EQ(rec_.calls(), (std::vector<std::string>{"add ns/a@3", "add ns/b@4", "add ns/same@2", "delete ns/b@4",
                                                    "update ns/a@3->7", "add ns/c@8"}));
  EXPECT_EQ(Cached(inf, {"ns/a", "ns/b", "ns/c", "ns/same", "ns/never"}),
            (std::vector<std::string>{"ns/a", "ns/c", "ns/same"}));
}

TEST_F(KubeInformerTest, GoneHttpAnswerRelists) {
  client_.AddList(Page({Obj("a", "3")}, "10"));
  client_.AddWatch({{}, HttpError(410, "Expired")});
  client_.AddList(Page({}, "60"));
  Informer inf(client_, clock_, nullptr, "/apis/apps/v1/deployments", "", "", Options());
  inf.AddEventHandler(rec_.Handler());
  std::jthread run = Start(inf);
  ASSERT_TRUE(Eventually([&] { return client_.watch_paths().size() >= 2; }));
  EXPECT_EQ(client_.list_paths().size(), 2u);
  EXPECT_TRUE(Contains(client_.watch_paths()[1], "resourceVersion=60"));
  ASSERT_TRUE(Handled(2));
  EXPECT_EQ(rec_.calls(), (std::vector<std::string>{"add ns/a@3", "delete ns/a@3"}));
  EXPECT_FALSE(inf.Get("ns/a").has_value());
}

TEST_F(KubeInformerTest, RepeatedGoneWithoutProgressBacksOff) {
  client_.AddList(Page({}, "10"));
  client_.AddWatch({{}, HttpError(410, "Expired")});
  client_.AddList(Page({}, "20"));
  client_.AddWatch({{}, HttpError(410, "Expired")});
  client_.AddList(Page({}, "30"));
  Informer inf(client_, clock_, nullptr, "/apis/apps/v1/deployments", "", "", Options());
  std::jthread run = Start(inf);
  // The first 410 relists at once (no virtual time needed).
  ASSERT_TRUE(Eventually([&] { return client_.watch_paths().size() >= 2; }));
  EXPECT_EQ(client_.list_times()[1], client_.watch_times()[0]);
  ASSERT_TRUE(clock_.AdvanceUntil([&] { return client_.list_paths().size() >= 3; }, 10ms));
  ASSERT_EQ(client_.list_paths().size(), 3u);
  // The second 410 in a row waits before relisting.
  EXPECT_EQ(client_.list_times()[2] - client_.watch_times()[1], 200ms);
}

TEST_F(KubeInformerTest, TransportErrorsBackOffExponentiallyThenRecover) {
  client_.AddList(Transport());  // the first list fails too
  client_.AddList(Page({}, "10"));
  client_.AddWatch({{}, Transport()});
  client_.AddWatch({{}, Transport()});
  client_.AddWatch({{}, Transport()});
  client_.AddWatch({{Ev("ADDED", Obj("a", "11"))}, Ok()});  // healthy: backoff resets
  client_.AddWatch({{}, Transport()});
  // then: a quiet stream
  Informer inf(client_, clock_, nullptr, "/apis/apps/v1/deployments", "", "", Options());
  inf.AddEventHandler(rec_.Handler());
  const auto t0 = clock_.Now();
  std::jthread run = Start(inf);
  // Virtual time moves only while the informer waits on the clock, so each
  // wait is measured exactly (no jitter here).
  ASSERT_TRUE(clock_.AdvanceUntil([&] { return client_.watch_paths().size() >= 6; }, 10ms));
  const auto lists = client_.list_times();
  const auto watches = client_.watch_times();
  ASSERT_EQ(lists.size(), 2u);
  ASSERT_EQ(watches.size(), 6u);
  auto ms = [](clock::Clock::Duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  EXPECT_EQ(ms(lists[0] - t0), 0);
  // list failed -> 200 ms; then watch failures -> 400, 800, 1600 ms.
  EXPECT_EQ(ms(lists[1] - lists[0]), 200);
  EXPECT_EQ(ms(watches[1] - watches[0]), 400);
  EXPECT_EQ(ms(watches[2] - watches[1]), 800);
  EXPECT_EQ(ms(watches[3] - watches[2]), 1600);
  // After the healthy stream the next watch starts at once, and the failure
  // after it waits the initial 200 ms again.
  EXPECT_EQ(ms(watches[4] - watches[3]), 0);
  EXPECT_EQ(ms(watches[5] - watches[4]), 200);
  EXPECT_TRUE(Contains(client_.watch_paths()[5], "resourceVersion=11"));
  ASSERT_TRUE(Handled(1));
  EXPECT_EQ(rec_.calls(), (std::vector<std::string>{"add ns/a@11"}));
}

TEST_F(KubeInformerTest, NonGoneErrorEventRewatchesWithoutRelist) {
  client_.AddList(Page({}, "10"));
  client_.AddWatch({{Ev("ERROR", {{"kind", "Status"}, {"reason", "InternalError"}, {"code", 500}})}, Ok()});
  Informer inf(client_, clock_, nullptr, "/apis/apps/v1/deployments", "", "", Options());
  std::jthread run = Start(inf);
  ASSERT_TRUE(clock_.AdvanceUntil([&] { return client_.watch_paths().size() >= 2; }, 10ms));
  ASSERT_EQ(client_.watch_paths().size(), 2u);
  EXPECT_EQ(client_.list_paths().size(), 1u);
  EXPECT_EQ(client_.watch_times()[1] - client_.watch_times()[0], 200ms);
}

TEST_F(KubeInformerTest, NamespaceAndLabelSelectorInPaths) {
  client_.AddList(Page({}, "1"));
  Informer inf(client_, clock_, nullptr, "/apis/apps/v1/deployments", "app.kubernetes.io/name=modelservice", "team-a",
               Options());
  EXPECT_EQ(inf.path(), "/apis/apps/v1/namespaces/team-a/deployments");
  std::jthread run = Start(inf);
  ASSERT_TRUE(Eventually([&] { return client_.watch_paths().size() >= 1; }));
  EXPECT_EQ(
      client_.list_paths()[0],
      "/apis/apps/v1/namespaces/team-a/deployments?limit=100&labelSelector=app.kubernetes.io%2Fname%3Dmodelservice");
  EXPECT_TRUE(Contains(client_.watch_paths()[0], "&labelSelector=app.kubernetes.io%2Fname%3Dmodelservice"));
}

TEST_F(KubeInformerTest, StopRequestEndsRunPromptly) {
  client_.AddList(Page({Obj("a", "1")}, "1"));
  Informer inf(client_, clock_, nullptr, "/apis/apps/v1/deployments", "", "", Options());
  std::jthread run = Start(inf);
  ASSERT_TRUE(Eventually([&] { return client_.watch_paths().size() >= 1; }));  // a quiet watch
  // Without a relay that polls: the request runs Stop(), which ends the watch
  // (a hang here fails the test by its timeout).
  run.request_stop();
  run.join();
  EXPECT_TRUE(inf.HasSynced());
}

TEST_F(KubeInformerTest, StopMethodEndsRunDuringBackoff) {
  // Nothing scripted: every list fails and the informer sits in backoff.
  Informer inf(client_, clock_, nullptr, "/apis/apps/v1/deployments", "", "", Options());
  std::jthread run = Start(inf);
  ASSERT_TRUE(Eventually([&] { return client_.list_paths().size() >= 1; }));
  EXPECT_FALSE(inf.HasSynced());
  inf.Stop();
  run.join();
  EXPECT_FALSE(inf.HasSynced());
}

TEST_F(KubeInformerTest, UnknownAndNamelessEventsAreIgnored) {
  client_.AddList(Page({}, "1"));
  client_.AddWatch({{Ev("WEIRD", Obj("x", "2")), Ev("ADDED", {{"metadata", {{"resourceVersion", "3"}}}}),
                     Ev("ADDED", Obj("ok", "4"))},
                    Ok()});
  Informer inf(client_, clock_, nullptr, "/apis/apps/v1/deployments", "", "", Options());
  inf.AddEventHandler(rec_.Handler());
  std::jthread run = Start(inf);
  ASSERT_TRUE(Eventually([&] { return client_.watch_paths().size() >= 2; }));
  ASSERT_TRUE(Handled(1));
  EXPECT_EQ(rec_.calls(), (std::vector<std::string>{"add ns/ok@4"}));
  EXPECT_EQ(Cached(inf, {"ns/x", "ns/ok"}), (std::vector<std::string>{"ns/ok"}));
}

TEST_F(KubeInformerTest, TransformDecidesWhatIsCachedAndWhatHandlersSee) {
  json big = Obj("a", "3");
  big["metadata"]["managedFields"] =
      json::array({{{"manager", "kubectl"}, {"fieldsV1", {{"f:spec", json::object()}}}}});
  big["spec"] = {{"replicas", 2}, {"template", {{"huge", std::string(1000, 'x')}}}};
  client_.AddList(Page({big}, "10"));
  client_.AddWatch({{Ev("MODIFIED", Obj("a", "11"))}, Ok()});
  InformerOptions o = Options();
  o.transform = [](const json& obj) {
    json out = {{"metadata", obj["metadata"]}};
    out["metadata"].erase("managedFields");
    if (obj.contains("spec")) out["replicas"] = obj["spec"].value("replicas", 0);
    return out;
  };
  Informer inf(client_, clock_, nullptr, "/apis/apps/v1/deployments", "", "", o);
  std::vector<json> seen;
  std::mutex mu;
  inf.AddEventHandler({[&](const json& obj) {
                         std::lock_guard<std::mutex> g(mu);
                         seen.push_back(obj);
                         clock_.Notify();
                       },
                       [&](const json& old_obj, const json&) {
                         std::lock_guard<std::mutex> g(mu);
                         seen.push_back(old_obj);
                         clock_.Notify();
                       },
                       nullptr});
  std::jthread run = Start(inf);
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard<std::mutex> g(mu);
    return seen.size() >= 2;
  }));
  std::lock_guard<std::mutex> g(mu);
  ASSERT_EQ(seen.size(), 2u);
  // The add and the update's old object are the transformed object.
  EXPECT_EQ(seen[0],
            json({{"metadata", {{"name", "a"}, {"namespace", "ns"}, {"resourceVersion", "3"}}}, {"replicas", 2}}));
  EXPECT_EQ(seen[1], seen[0]);
  auto cached = inf.Get("ns/a");
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ(*cached, json({{"metadata", {{"name", "a"}, {"namespace", "ns"}, {"resourceVersion", "11"}}}}));
}

TEST_F(KubeInformerTest, MalformedObjectsAndThrowingHandlersAreSkippedNotFatal) {
  // An ownerReference with `controller: "yes"`: a handler that reads it as a
  // boolean throws; so does this transform for objects named "bad".
  json yes = Obj("yes", "2");
  yes["metadata"]["ownerReferences"] = json::array({{{"kind", "ModelService"}, {"controller", "yes"}}});
  client_.AddList(Page({Obj("bad", "1")}, "1"));
  client_.AddWatch({{Ev("ADDED", yes), Ev("ADDED", Obj("bad", "3")), Ev("ADDED", Obj("ok", "4"))}, Ok()});
  InformerOptions o = Options();
  o.transform = [](const json& obj) {
    if (obj["metadata"]["name"] == "bad") throw std::runtime_error("cannot transform");
    return obj;
  };
  Informer inf(client_, clock_, nullptr, "/apis/apps/v1/deployments", "", "", o);
  inf.AddEventHandler({[&](const json& obj) {
                         if (obj["metadata"].contains("ownerReferences")) {
                           (void)obj["metadata"]["ownerReferences"][0]["controller"].get<bool>();  // throws type_error
                         }
                       },
                       nullptr, nullptr});
  inf.AddEventHandler(rec_.Handler());
  std::jthread run = Start(inf);
  ASSERT_TRUE(Eventually([&] { return client_.watch_paths().size() >= 2; }));
  // The throwing handler did not stop the next handler, nor the next events.
  ASSERT_TRUE(Handled(2));
  EXPECT_EQ(rec_.calls(), (std::vector<std::string>{"add ns/yes@2", "add ns/ok@4"}));
  EXPECT_EQ(Cached(inf, {"ns/bad", "ns/yes", "ns/ok"}), (std::vector<std::string>{"ns/yes", "ns/ok"}));
  // The skipped event's resourceVersion was still passed.
  EXPECT_EQ(inf.LastResourceVersion(), "4");
  EXPECT_TRUE(Contains(client_.watch_paths()[1], "resourceVersion=4"));
}

}  // namespace
}  // namespace ms::runtime
