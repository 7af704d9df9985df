// manager::Manager (manager.h): what needs leadership starts once leading,
// what needs the caches too once they have synced, /readyz follows the
// caches; Shutdown() stops in order and releases the Lease (exit 0), a lost
// Lease aborts in order (exit 1). The Lease is an in-memory one, time a fake
// clock; the caches list from a fake API whose LIST waits for the test.
#include "controller/manager/manager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "test/support/fake_clock.h"
#include "test/support/gate.h"
#include "test/support/log_capture.h"
#include "test/support/mem_lease_store.h"
#include "test/support/verb_client.h"

namespace ms::manager {
namespace {

using nlohmann::json;
using std::chrono::seconds;

// LISTs answer (empty) once `list_gate` opens; WATCHes stay quiet until stopped.
class HeldApi final : public test::VerbClient {
 public:
  test::Gate list_gate{false};

  kube::Result OnList(const std::string&) override {
    list_gate.Pass();
    return {200, {{"metadata", {{"resourceVersion", "1"}}}, {"items", json::array()}}, std::nullopt};
  }
  kube::Result Watch(const std::string&, const kube::WatchHandler&, std::stop_token stop) override {
    std::mutex m;
    std::unique_lock<std::mutex> lock(m);
    std::condition_variable_any().wait(lock, stop, [] { return false; });
    return {200, json(), std::nullopt};
  }
};

// What the Runnables did, in order.
class Journal {
 public:
  void Write(const std::string& entry) {
    std::lock_guard<std::mutex> g(mu_);
    entries_.push_back(entry);
    cv_.notify_all();
  }
  bool Await(const std::string& entry) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, seconds(30), [&] { return Has(entry); });
  }
  bool Contains(const std::string& entry) {
    std::lock_guard<std::mutex> g(mu_);
    return Has(entry);
  }
  std::vector<std::string> entries() {
    std::lock_guard<std::mutex> g(mu_);
    return entries_;
  }

 private:
  bool Has(const std::string& entry) const {
    return std::find(entries_.begin(), entries_.end(), entry) != entries_.end();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> entries_;
};

std::unique_ptr<Runnable> Recorded(Journal& j, const std::string& name) {
  return Runnable::Of([&j, name] { j.Write(name + ".start"); }, [&j, name] { j.Write(name + ".stop"); },
                      [&j, name] { j.Write(name + ".abort"); });
}

// A Manager over two caches with one Runnable per Needs, run on a thread.
struct Fixture {
  explicit Fixture(bool elect) {
    ManagerOptions o;  // no endpoints ("0": port -1)
    o.election = {"lease", "ns", "me"};
    mgr = std::make_unique<Manager>(clock, registry, election_metrics, elect ? &store : nullptr, o, log.logger());
    mgr->AddCache(a)
        .AddCache(b)
        .Add(Needs::kLeadershipAndCaches, Recorded(journal, "workers"))
        .Add(Needs::kLeadership, Recorded(journal, "lead"))
        .Add(Needs::kNothing, Recorded(journal, "watch"))
        .Add(Needs::kLeadership, Runnable::Of(
                                     nullptr, [this] { journal.Write("events.stop holder=" + Holder()); },
                                     [this] { journal.Write("events.abort"); }))
        .OnAbort([this] { journal.Write("close clients"); });
  }
  ~Fixture() {
    api.list_gate.Open();  // the informers' threads must end
    mgr->Shutdown();
    if (runner.joinable()) runner.join();
  }
  void Run() {
    runner = std::thread([this] { exit_code = mgr->Run(); });
  }
  std::string Holder() {
    const json spec = store.Spec();
    return spec.is_object() ? spec.value("holderIdentity", "") : "(no lease)";
  }
  // Someone else holds the Lease, renewed now, for 15 s on our clock.
  void HeldByOther() {
    json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", "lease"}, {"namespace", "ns"}, {"resourceVersion", "1"}}},
                  {"spec", {{"holderIdentity", "other"}, {"leaseDurationSeconds", 15}, {"renewTime", "x"}}}};
    store.lease = lease;
  }

  FakeClock clock;
  test::MemLeaseStore store;
  test::LogCapture log;
  metrics::Registry registry;
  runtime::LeaderElectionMetrics election_metrics{registry};
  HeldApi api;
  runtime::InformerSet a{api, clock, log.logger(), "/apis/apps/v1/deployments", "", {}};
  runtime::InformerSet b{api, clock, log.logger(), "/api/v1/services", "", {"x", "y"}};
  Journal journal;
  std::unique_ptr<Manager> mgr;
  std::thread runner;
  std::optional<int> exit_code;
};

// The caches say nothing when they sync but to the Manager: polled.
bool AwaitSynced(const Manager& mgr) {
  const auto end = std::chrono::steady_clock::now() + seconds(30);
  while (!mgr.Synced()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(Manager, ReadyOnlyOnceEveryCacheHasSynced) {
  Fixture f(false);
  std::string why;
  EXPECT_FALSE(f.mgr->Ready(&why));
  EXPECT_EQ(why, "informer caches not synced");
  f.Run();
  ASSERT_TRUE(f.journal.Await("lead.start"));  // leads at once without election
  EXPECT_EQ(f.mgr->write_gate(), nullptr);
  EXPECT_FALSE(f.mgr->Ready(&why));
  EXPECT_FALSE(f.journal.Contains("workers.start"));  // decided in the same turn as lead.start
  f.api.list_gate.Open();
  ASSERT_TRUE(f.journal.Await("workers.start"));
  EXPECT_TRUE(f.mgr->Ready(&why));
  EXPECT_EQ(f.journal.entries(), (std::vector<std::string>{"watch.start", "lead.start", "workers.start"}));
}

TEST(Manager, StartsWhatNeedsLeadershipOnlyWhenLeading) {
  Fixture f(true);
  f.HeldByOther();
  f.Run();
  ASSERT_TRUE(f.log.AwaitLine("waiting to become leader of lease ns/lease"));
  ASSERT_TRUE(f.journal.Await("watch.start"));
  f.api.list_gate.Open();
  ASSERT_TRUE(AwaitSynced(*f.mgr));
  f.clock.AwaitWaiters(1);  // the elector waits for its next try
  EXPECT_EQ(f.journal.entries(), std::vector<std::string>{"watch.start"});
  ASSERT_NE(f.mgr->write_gate(), nullptr);
  EXPECT_EQ(f.mgr->write_gate()->WriteTimeLeft(), clock::Clock::Duration::zero());

  f.clock.Advance(seconds(20));  // the other's Lease has expired: ours
  ASSERT_TRUE(f.journal.Await("workers.start"));
  EXPECT_EQ(f.journal.entries(), (std::vector<std::string>{"watch.start", "lead.start", "workers.start"}));
  EXPECT_EQ(f.store.Holder(), "me");
}

TEST(Manager, ShutdownStandbyStopsOnlyWhatStarted) {
  Fixture f(true);
  f.HeldByOther();
  f.Run();
  ASSERT_TRUE(f.journal.Await("watch.start"));
  f.api.list_gate.Open();
  f.mgr->Shutdown();
  f.runner.join();
  EXPECT_EQ(f.exit_code, 0);
  EXPECT_EQ(f.journal.entries(), (std::vector<std::string>{"watch.start", "watch.stop"}));
  EXPECT_EQ(f.store.Holder(), "other");
}

TEST(Manager, ShutdownDrainsThenReleasesTheLease) {
  Fixture f(true);
  f.api.list_gate.Open();
  f.Run();
  ASSERT_TRUE(f.journal.Await("workers.start"));
  EXPECT_EQ(f.store.Holder(), "me");
  f.mgr->Shutdown();
  f.runner.join();
  EXPECT_EQ(f.exit_code, 0);
  // Leader work first, in the reverse of its start (the Events written
  // while the Lease is still ours); then the Lease is released.
  EXPECT_EQ(f.journal.entries(), (std::vector<std::string>{"watch.start", "lead.start", "workers.start", "workers.stop",
                                                           "events.stop holder=me", "lead.stop", "watch.stop"}));
  EXPECT_EQ(f.store.Holder(), "");
  EXPECT_TRUE(f.log.AwaitLine("stopped (exit code 0)"));
}

TEST(Manager, LostLeaseAbortsWithoutDrainingAndExitsOne) {
  Fixture f(true);
  f.api.list_gate.Open();
  f.Run();
  ASSERT_TRUE(f.journal.Await("workers.start"));
  f.clock.AwaitWaiters(1);  // the elector waits to renew
  f.store.down = true;
  f.clock.Advance(seconds(11));  // past the renew deadline
  f.runner.join();
  EXPECT_EQ(f.exit_code, 1);
  EXPECT_EQ(f.journal.entries(),
            (std::vector<std::string>{"watch.start", "lead.start", "workers.start", "close clients", "watch.abort",
                                      "events.abort", "lead.abort", "workers.abort"}));
  EXPECT_TRUE(
      f.log.AwaitLine("leadership lost: no write leaves this process any more; exiting without draining the queue"));
  EXPECT_TRUE(f.log.AwaitLine("stopped (exit code 1)"));
}

TEST(Manager, AnEndpointThatCannotListenEndsRunWithOne) {
  Fixture f(false);
  ManagerOptions o;
  o.probe_address = {"256.0.0.1", 0};  // not an address
  Manager bad(f.clock, f.registry, f.election_metrics, nullptr, o, f.log.logger());
  EXPECT_EQ(bad.Run(), 1);
  EXPECT_FALSE(f.log.lines().empty());
}

}  // namespace
}  // namespace ms::manager
