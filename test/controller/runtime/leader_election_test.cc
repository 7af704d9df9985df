#include "controller/runtime/leader_election.h"

#include <gtest/gtest.h>

#include <optional>
#include <thread>

#include "base/timefmt.h"
#include "test/support/fake_clock.h"

namespace ms::controller {
namespace {

using nlohmann::json;
using std::chrono::seconds;

// An in-memory Lease with the API server's optimistic concurrency, plus
// scripted failures.
class MemLeaseStore final : public LeaseStore {
 public:
  kube::Result Get() override {
    std::lock_guard<std::mutex> g(mu_);
    gets++;
    if (down) return Err(0, "Transport");
    if (!lease) return Err(404, "NotFound");
    return {200, *lease, std::nullopt};
  }
  kube::Result Create(const json& l) override {
    std::lock_guard<std::mutex> g(mu_);
    if (down) return Err(0, "Transport");
    if (lease) return Err(409, "AlreadyExists");
    lease = l;
    (*lease)["metadata"]["resourceVersion"] = std::to_string(++rv);
    return {201, *lease, std::nullopt};
  }
  kube::Result Update(const json& l) override {
    std::lock_guard<std::mutex> g(mu_);
    updates++;
    if (down) return Err(0, "Transport");
    if (!lease) return Err(404, "NotFound");
    if (conflict_next) {
      conflict_next = false;
      // Someone else wrote in between.
      (*lease)["metadata"]["resourceVersion"] = std::to_string(++rv);
      return Err(409, "Conflict");
    }
    if (l["metadata"].value("resourceVersion", "") != (*lease)["metadata"]["resourceVersion"]) {
      return Err(409, "Conflict");
    }
    lease = l;
    (*lease)["metadata"]["resourceVersion"] = std::to_string(++rv);
    return {200, *lease, std::nullopt};
  }
  std::string Describe() const override { return "ns/lease"; }

  json Spec() {
    std::lock_guard<std::mutex> g(mu_);
    return lease ? (*lease)["spec"] : json();
  }

  std::mutex mu_;
  std::optional<json> lease;
  int rv = 0;
  bool down = false;
  bool conflict_next = false;
  int gets = 0, updates = 0;

 private:
  static kube::Result Err(int code, const std::string& reason) {
    return {code, json(), kube::Status{code, reason, reason}};
  }
};

struct Candidate {
  Candidate(MemLeaseStore& store, FakeClock& clock, const std::string& id, prometheus::Registry* reg = nullptr)
      : elector(store, clock, Config(id), LeaderCallbacks{[this] { started++; }, [this] { stopped++; }}, reg) {}
  static LeaderElectionConfig Config(const std::string& id) {
    LeaderElectionConfig c;
    c.name = "modelservice-controller";
    c.ns = "ns";
    c.identity = id;
    return c;
  }
  int started = 0, stopped = 0;
  LeaderElector elector;
};

TEST(LeaderElection, AcquiresFreeLeaseByCreatingIt) {
  FakeClock clock;
  MemLeaseStore store;
  prometheus::Registry reg;
  Candidate a(store, clock, "a", &reg);
  EXPECT_NE(metrics::Serialize(reg).find("leader_election_master_status{name=\"modelservice-controller\"} 0"),
            std::string::npos);
  const auto next = a.elector.Step();
  EXPECT_TRUE(a.elector.IsLeader());
  EXPECT_EQ(a.started, 1);
  EXPECT_EQ(next, clock.Now() + seconds(2));
  const json spec = store.Spec();
  EXPECT_EQ(spec["holderIdentity"], "a");
  EXPECT_EQ(spec["leaseDurationSeconds"], 15);
  EXPECT_EQ(spec["leaseTransitions"], 0);
  EXPECT_EQ(spec["renewTime"], FormatMicroTime(clock.WallNow()));
  EXPECT_EQ(spec["acquireTime"].get<std::string>().size(), std::string("2006-01-02T15:04:05.000000Z").size());
  EXPECT_NE(metrics::Serialize(reg).find("leader_election_master_status{name=\"modelservice-controller\"} 1"),
            std::string::npos);
}

TEST(LeaderElection, RenewKeepsAcquireTimeAndTransitions) {
  FakeClock clock;
  MemLeaseStore store;
  Candidate a(store, clock, "a");
  a.elector.Step();
  const json first = store.Spec();
  clock.Advance(seconds(2));
  a.elector.Step();
  const json second = store.Spec();
  EXPECT_EQ(second["acquireTime"], first["acquireTime"]);
  EXPECT_NE(second["renewTime"], first["renewTime"]);
  EXPECT_EQ(second["leaseTransitions"], 0);
  EXPECT_EQ(a.started, 1);
}

TEST(LeaderElection, StandbyDoesNotStealLiveLease) {
  FakeClock clock;
  MemLeaseStore store;
  Candidate a(store, clock, "a");
  Candidate b(store, clock, "b");
  a.elector.Step();
  for (int i = 0; i < 20; ++i) {  // 40 s, a renewing every 2 s
    b.elector.Step();
    EXPECT_FALSE(b.elector.IsLeader());
    clock.Advance(seconds(2));
    a.elector.Step();
  }
  EXPECT_EQ(store.Spec()["holderIdentity"], "a");
  EXPECT_EQ(b.started, 0);
}

TEST(LeaderElection, StandbyTakesOverExpiredLeaseMeasuredOnItsOwnClock) {
  FakeClock clock;
  MemLeaseStore store;
  Candidate a(store, clock, "a");
  Candidate b(store, clock, "b");
  a.elector.Step();  // a leads, then dies (never steps again)
  b.elector.Step();  // b sees the record at t0
  clock.Advance(seconds(14));
  b.elector.Step();
  EXPECT_FALSE(b.elector.IsLeader()) << "not yet 15 s since b saw the record change";
  clock.Advance(seconds(1));
  b.elector.Step();
  EXPECT_TRUE(b.elector.IsLeader());
  EXPECT_EQ(store.Spec()["holderIdentity"], "b");
  EXPECT_EQ(store.Spec()["leaseTransitions"], 1);
}

TEST(LeaderElection, WallClockSkewDoesNotMatter) {
  FakeClock clock;
  MemLeaseStore store;
  Candidate a(store, clock, "a");
  a.elector.Step();
  // The record says it was renewed long ago (another machine's clock), but b
  // has only just seen it: b must wait a full lease duration.
  {
    std::lock_guard<std::mutex> g(store.mu_);
    (*store.lease)["spec"]["renewTime"] = "2001-01-01T00:00:00.000000Z";
  }
  Candidate b(store, clock, "b");
  b.elector.Step();
  EXPECT_FALSE(b.elector.IsLeader());
}

TEST(LeaderElection, RenewFailureStopsWithinRenewDeadline) {
  FakeClock clock;
  MemLeaseStore store;
  Candidate a(store, clock, "a");
  a.elector.Step();
  const auto t0 = clock.Now();
  store.down = true;
  auto next = clock.Now() + seconds(2);
  while (a.elector.IsLeader()) {
    ASSERT_LE(clock.Now() - t0, seconds(10)) << "must stop within the renew deadline";
    clock.Advance(next - clock.Now());
    next = a.elector.Step();
  }
  EXPECT_EQ(a.elector.state(), LeaderElector::State::kLost);
  EXPECT_EQ(clock.Now() - t0, seconds(10));
  EXPECT_EQ(a.stopped, 1);
  // A lost elector never tries again.
  const int updates = store.updates;
  store.down = false;
  a.elector.Step();
  EXPECT_EQ(store.updates, updates);
}

TEST(LeaderElection, ConflictIsALostRaceRetriedLater) {
  FakeClock clock;
  MemLeaseStore store;
  Candidate a(store, clock, "a");
  a.elector.Step();
  clock.Advance(seconds(2));
  store.conflict_next = true;
  a.elector.Step();
  EXPECT_TRUE(a.elector.IsLeader()) << "one failed renew is within the deadline";
  clock.Advance(seconds(2));
  a.elector.Step();
  EXPECT_TRUE(a.elector.IsLeader());
  EXPECT_EQ(store.Spec()["holderIdentity"], "a");

  // Two candidates race for a free lease: one create wins, the other gets 409.
  MemLeaseStore store2;
  Candidate x(store2, clock, "x");
  Candidate y(store2, clock, "y");
  x.elector.Step();
  y.elector.Step();
  EXPECT_TRUE(x.elector.IsLeader());
  EXPECT_FALSE(y.elector.IsLeader());
}

TEST(LeaderElection, StaleResourceVersionUpdateIsRejected) {
  FakeClock clock;
  MemLeaseStore store;
  Candidate a(store, clock, "a");
  a.elector.Step();
  // b takes over after expiry while a is partitioned...
  Candidate b(store, clock, "b");
  b.elector.Step();
  clock.Advance(seconds(15));
  b.elector.Step();
  ASSERT_TRUE(b.elector.IsLeader());
  // ...a comes back: it sees b's fresh record and does not overwrite it.
  a.elector.Step();
  EXPECT_EQ(store.Spec()["holderIdentity"], "b");
}

TEST(LeaderElection, ReleaseLetsStandbyTakeOverAtNextRetry) {
  FakeClock clock;
  MemLeaseStore store;
  Candidate a(store, clock, "a");
  Candidate b(store, clock, "b");
  a.elector.Step();
  b.elector.Step();
  EXPECT_TRUE(a.elector.Release());
  const json spec = store.Spec();
  EXPECT_EQ(spec["holderIdentity"], "");
  EXPECT_EQ(spec["leaseDurationSeconds"], 1);
  EXPECT_EQ(spec["renewTime"], FormatMicroTime(clock.WallNow()));
  clock.Advance(seconds(2));
  b.elector.Step();
  EXPECT_TRUE(b.elector.IsLeader());
  EXPECT_EQ(store.Spec()["holderIdentity"], "b");
}

TEST(LeaderElection, RunStopReleases) {
  FakeClock clock;
  MemLeaseStore store;
  Candidate a(store, clock, "a");
  std::optional<LeaderElector::State> result;
  std::thread t([&] { result = a.elector.Run(); });
  for (int i = 0; i < 2000 && !a.elector.IsLeader(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(a.elector.IsLeader());
  a.elector.Stop();
  t.join();
  EXPECT_EQ(result, LeaderElector::State::kStopped);
  EXPECT_EQ(store.Spec()["holderIdentity"], "");
  EXPECT_EQ(a.stopped, 1);
}

TEST(LeaderElection, RunReturnsLostWhenRenewFails) {
  FakeClock clock;
  MemLeaseStore store;
  Candidate a(store, clock, "a");
  std::optional<LeaderElector::State> result;
  std::atomic<bool> done{false};
  std::thread t([&] {
    result = a.elector.Run();
    done = true;
  });
  for (int i = 0; i < 2000 && !a.elector.IsLeader(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(a.elector.IsLeader());
  store.down = true;
  for (int i = 0; i < 200 && !done; ++i) {
    clock.Advance(std::chrono::milliseconds(500));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  t.join();
  EXPECT_EQ(result, LeaderElector::State::kLost);
}

TEST(LeaderElection, DefaultIdentityIsHostnameAndSuffix) {
  const std::string a = DefaultIdentity(), b = DefaultIdentity();
  EXPECT_NE(a, b);
  EXPECT_NE(a.find('_'), std::string::npos);
}

}  // namespace
}  // namespace ms::controller
