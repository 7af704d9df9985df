#include "controller/runtime/leader_election.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

#include "shared/clock/timefmt.h"
#include "test/support/fake_clock.h"
#include "test/support/mem_lease_store.h"
#include "test/support/notification.h"
#include "test/support/unread_metrics.h"

namespace ms::runtime {
namespace {

using nlohmann::json;
using std::chrono::seconds;

using test::MemLeaseStore;
using test::NetworkedLeaseStore;

struct Candidate {
  Candidate(LeaseStore& store, FakeClock& clock, const std::string& id,
            LeaderElectionMetrics& metrics = test::Unread<LeaderElectionMetrics>())
      : elector(store, clock, Config(id), LeaderCallbacks{[this] { Started(); }, [this] { stopped++; }}, metrics) {}
  static LeaderElectionConfig Config(const std::string& id) {
    LeaderElectionConfig c;
    c.name = "modelservice-controller";
    c.ns = "ns";
    c.identity = id;
    c.seed = std::hash<std::string>{}(id) | 1;
    return c;
  }
  void Started() {
    started++;
    leading.Notify();
  }
  std::atomic<int> started{0}, stopped{0};
  test::Notification leading;
  LeaderElector elector;
};

TEST(LeaderElection, AcquiresFreeLeaseByCreatingIt) {
  FakeClock clock;
  MemLeaseStore store;
  metrics::Registry reg;
  LeaderElectionMetrics metrics(reg);
  Candidate a(store, clock, "a", metrics);
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
  EXPECT_EQ(spec["renewTime"], clock::FormatMicroTime(clock.WallNow()));
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

// b's read of the Lease waits 7 s for a slow (or paused) API server; in the
// meantime a renews, and the read answers with that renewal.
class SlowFirstRead final : public LeaseStore {
 public:
  explicit SlowFirstRead(MemLeaseStore& store) : store_(store) {}
  kube::Result Get(clock::Clock::TimePoint deadline) override {
    if (meanwhile) std::exchange(meanwhile, nullptr)();
    return store_.Get(deadline);
  }
  kube::Result Create(const json& l, clock::Clock::TimePoint deadline) override { return store_.Create(l, deadline); }
  kube::Result Update(const json& l, clock::Clock::TimePoint deadline) override { return store_.Update(l, deadline); }
  std::string Describe() const override { return store_.Describe(); }
  std::function<void()> meanwhile;

 private:
  MemLeaseStore& store_;
};

// a on the store directly; b, the standby, through SlowFirstRead.
struct SlowStandby : ::testing::Test {
  FakeClock clock;
  MemLeaseStore store;
  SlowFirstRead b_link{store};
  Candidate a{store, clock, "a"};
  Candidate b{b_link, clock, "b"};
};

TEST_F(SlowStandby, StandbyMeasuresTheLeaseFromWhenItsReadWasAnswered) {
  const auto t0 = clock.Now();
  a.elector.Step();
  b_link.meanwhile = [&] {
    clock.Advance(seconds(7));
    a.elector.Step();  // a renews at t0 + 7 s, then dies: its writes stay open until t0 + 17 s
  };
  auto next = b.elector.Step();  // sent at t0, answered at t0 + 7 s with a's renewal
  EXPECT_FALSE(b.elector.IsLeader());
  EXPECT_EQ(a.elector.WriteTimeLeft(), seconds(10));
  while (!b.elector.IsLeader()) {
    ASSERT_LT(clock.Now(), t0 + seconds(40));
    if (next > clock.Now()) clock.Advance(next - clock.Now());
    next = b.elector.Step();
    if (b.elector.IsLeader()) {
      EXPECT_EQ(a.elector.WriteTimeLeft(), clock::Clock::Duration::zero()) << "two leaders could write at once";
    }
  }
  EXPECT_GE(clock.Now(), t0 + seconds(22)) << "15 s after the read that saw a's renewal was answered";
}

TEST_F(SlowStandby, AnAcquireWhoseReadWaitedHoldsTheLeaseFromItsWrite) {
  // b's read of an expired Lease waits 9 s (a paused API server); then it
  // takes the Lease. It holds it from when that write was sent, not from
  // when the attempt began: else it would have 1 s of writes left and lose
  // the Lease at its first renewal.
  a.elector.Step();  // a leads, then dies
  b.elector.Step();  // b sees a's record
  clock.Advance(seconds(16));
  b_link.meanwhile = [&] { clock.Advance(seconds(9)); };
  b.elector.Step();
  ASSERT_TRUE(b.elector.IsLeader());
  EXPECT_EQ(b.elector.WriteTimeLeft(), seconds(10));
  clock.Advance(seconds(2));
  b.elector.Step();
  EXPECT_TRUE(b.elector.IsLeader()) << "renewed 2 s after taking the Lease";
  EXPECT_EQ(b.elector.WriteTimeLeft(), seconds(10));
  EXPECT_EQ(b.stopped, 0);
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
  EXPECT_EQ(spec["renewTime"], clock::FormatMicroTime(clock.WallNow()));
  clock.Advance(seconds(2));
  b.elector.Step();
  EXPECT_TRUE(b.elector.IsLeader());
  EXPECT_EQ(store.Spec()["holderIdentity"], "b");
}

// A standby that watches the Lease tries as soon as it sees it released,
// not at its next retry: with time standing still, it leads once the leader
// has stopped. It does not try on the leader's renewals.
TEST(LeaderElection, AStandbyWatchingTheLeaseTakesItWhenReleasedWithoutWaitingForItsRetry) {
  FakeClock clock;
  MemLeaseStore store;
  store.watchable = true;
  store.on_watch = [&clock] { clock.Notify(); };
  auto count = [&store](int MemLeaseStore::*field) {
    std::lock_guard<std::mutex> g(store.mu_);
    return store.*field;
  };
  Candidate a(store, clock, "a");
  Candidate b(store, clock, "b");
  std::thread ta([&] { a.elector.Run(); });
  ASSERT_TRUE(a.leading.Wait());
  std::thread tb([&] { b.elector.Run(); });
  // b has tried once (the Lease is a's) and waits for its retry; both watch.
  ASSERT_TRUE(clock.Eventually(
      [&] { return count(&MemLeaseStore::watches) == 2 && count(&MemLeaseStore::gets) >= 2 && clock.waiters() == 2; }));
  const int gets_before = count(&MemLeaseStore::gets);
  clock.Advance(seconds(2));  // a renews (b's retry is later: 2 s * (1 + 1.2 * jitter))
  ASSERT_TRUE(clock.Eventually([&] { return count(&MemLeaseStore::updates) >= 1 && clock.waiters() == 2; }));
  EXPECT_EQ(count(&MemLeaseStore::gets), gets_before) << "a renewal is no reason to try";
  EXPECT_EQ(b.started, 0);
  a.elector.Stop();
  ta.join();
  ASSERT_TRUE(b.leading.Wait());
  EXPECT_EQ(store.Holder(), "b");
  b.elector.Stop();
  tb.join();
  EXPECT_EQ(store.Holder(), "");
}

TEST(LeaderElection, RunStopReleases) {
  FakeClock clock;
  MemLeaseStore store;
  Candidate a(store, clock, "a");
  std::optional<LeaderElector::State> result;
  std::thread t([&] { result = a.elector.Run(); });
  ASSERT_TRUE(a.leading.Wait());  // Run's first attempt is immediate
  a.elector.Stop();
  t.join();
  EXPECT_EQ(result, LeaderElector::State::kStopped);
  EXPECT_EQ(store.Holder(), "");
  EXPECT_EQ(a.stopped, 1);
  EXPECT_EQ(a.elector.WriteTimeLeft(), clock::Clock::Duration::zero());
}

TEST(LeaderElection, RunReturnsLostWhenRenewFails) {
  FakeClock clock;
  MemLeaseStore store;
  Candidate a(store, clock, "a");
  std::optional<LeaderElector::State> result;
  std::thread t([&] { result = a.elector.Run(); });
  ASSERT_TRUE(a.leading.Wait());
  store.down = true;
  // Past the renew deadline at once: whenever Run looks, the only answer is
  // to step down (it tries no request once the deadline has passed).
  clock.Advance(seconds(11));
  t.join();
  EXPECT_EQ(result, LeaderElector::State::kLost);
  EXPECT_EQ(a.stopped, 1);
}

TEST(LeaderElection, HungRenewStepsDownAtTheRenewDeadlineBeforeAnotherCanTakeOver) {
  // a leads; its link to the API server then hangs (every request takes until
  // its deadline). b, a healthy standby, polls all along. a must have stopped
  // writing (gate closed) and stepped down before b can take the Lease.
  FakeClock clock;
  MemLeaseStore store;
  NetworkedLeaseStore a_link(store, clock), b_link(store, clock);
  Candidate a(a_link, clock, "a");
  Candidate b(b_link, clock, "b");
  const auto t0 = clock.Now();
  a.elector.Step();
  ASSERT_TRUE(a.elector.IsLeader());
  EXPECT_EQ(a.elector.WriteTimeLeft(), seconds(10));
  b.elector.Step();  // b sees a's record at t0

  a_link.Partition(NetworkedLeaseStore::Hang::kUntilDeadline);
  clock.Advance(seconds(2));
  EXPECT_EQ(a.elector.WriteTimeLeft(), seconds(8));
  a.elector.Step();  // the renew hangs until its deadline
  EXPECT_EQ(a_link.hung_deadlines(), (std::vector<clock::Clock::TimePoint>{t0 + seconds(10)}))
      << "one attempt, bounded by the renew deadline (not the 30 s request timeout)";
  EXPECT_EQ(clock.Now(), t0 + seconds(10));
  EXPECT_EQ(a.elector.state(), LeaderElector::State::kLost);
  EXPECT_EQ(a.elector.WriteTimeLeft(), clock::Clock::Duration::zero());
  EXPECT_EQ(a.stopped, 1);
  const auto a_down = clock.Now();

  // b takes over once a full lease duration has passed since it saw a's record.
  auto next = clock.Now();
  while (!b.elector.IsLeader()) {
    ASSERT_LT(clock.Now(), t0 + seconds(30));
    if (next > clock.Now()) clock.Advance(next - clock.Now());
    next = b.elector.Step();
  }
  EXPECT_GE(clock.Now(), t0 + seconds(15));
  EXPECT_GE(clock.Now() - a_down, seconds(5)) << "a stepped down lease_duration - renew_deadline before";
  EXPECT_EQ(store.Holder(), "b");
}

TEST(LeaderElection, GateClosesAtTheRenewDeadlineWhileTheElectorIsStuck) {
  // The renew request hangs with no deadline at all (as with the shared
  // client's 30 s timeout). The gate is computed from the clock at each
  // question, so it closes on time although the elector's thread, which
  // would report the loss, is blocked.
  FakeClock clock;
  MemLeaseStore store;
  NetworkedLeaseStore link(store, clock);
  Candidate a(link, clock, "a");
  std::optional<LeaderElector::State> result;
  std::thread t([&] { result = a.elector.Run(); });
  ASSERT_TRUE(a.leading.Wait());
  const auto t0 = clock.Now();
  link.Partition(NetworkedLeaseStore::Hang::kBlocked);
  clock.Advance(seconds(2));  // the renewal is due
  ASSERT_TRUE(link.WaitUntilBlocked());
  EXPECT_EQ(a.elector.WriteTimeLeft(), seconds(8));
  clock.Advance(seconds(8));  // t0 + 10 s: the renew deadline
  EXPECT_EQ(a.elector.WriteTimeLeft(), clock::Clock::Duration::zero());
  EXPECT_EQ(a.elector.state(), LeaderElector::State::kLeader) << "the elector's thread has not noticed yet";
  link.Heal();  // the hung request fails at last
  t.join();
  EXPECT_EQ(result, LeaderElector::State::kLost);
  EXPECT_EQ(clock.Now(), t0 + seconds(10));
}

TEST(LeaderElection, PausedLeaderStepsDownWithoutARequest) {
  // The process was stopped (SIGSTOP) past its renew deadline: on resuming it
  // may not write, and its elector gives up without trying to renew.
  FakeClock clock;
  MemLeaseStore store;
  Candidate a(store, clock, "a");
  a.elector.Step();
  const int gets = store.gets, updates = store.updates;
  clock.Advance(seconds(25));
  EXPECT_EQ(a.elector.WriteTimeLeft(), clock::Clock::Duration::zero());
  a.elector.Step();
  EXPECT_EQ(a.elector.state(), LeaderElector::State::kLost);
  EXPECT_EQ(store.gets, gets);
  EXPECT_EQ(store.updates, updates);
}

TEST(LeaderElection, EachAttemptIsBoundedByTheRenewDeadline) {
  FakeClock clock;
  MemLeaseStore store;
  Candidate a(store, clock, "a");
  const auto t0 = clock.Now();
  a.elector.Step();                       // acquire: as long as a renewal would get
  ASSERT_EQ(store.deadlines.size(), 2u);  // get (404), create
  EXPECT_EQ(store.deadlines[0], t0 + seconds(10));
  store.deadlines.clear();
  clock.Advance(seconds(2));
  store.conflict_next = true;  // the one-request renew fails: get + update follow
  a.elector.Step();
  // Every request of a renewal ends by the renew deadline of the last
  // successful renew (t0 + 10 s), not 10 s after the attempt began.
  EXPECT_EQ(store.deadlines, (std::vector<clock::Clock::TimePoint>(3, t0 + seconds(10))));
  EXPECT_TRUE(a.elector.IsLeader());
  EXPECT_EQ(a.elector.WriteTimeLeft(), seconds(10));  // renewed at t0 + 2 s
}

TEST(LeaderElection, LeaderRenewsWithOneRequest) {
  FakeClock clock;
  MemLeaseStore store;
  Candidate a(store, clock, "a");
  a.elector.Step();
  const int gets = store.gets;
  for (int i = 0; i < 5; ++i) {
    clock.Advance(seconds(2));
    a.elector.Step();
  }
  EXPECT_EQ(store.gets, gets) << "a leader renews with the record it last saw, as client-go does";
  EXPECT_EQ(store.updates, 5);
  EXPECT_EQ(store.Holder(), "a");
}

TEST(LeaderElection, AcquireRetriesAreJitteredRenewalsAreNot) {
  FakeClock clock;
  MemLeaseStore store;
  Candidate a(store, clock, "a");
  Candidate b(store, clock, "b");
  a.elector.Step();
  std::set<clock::Clock::Duration> waits;
  for (int i = 0; i < 20; ++i) {
    const auto next = b.elector.Step();
    const auto wait = next - clock.Now();
    EXPECT_GE(wait, seconds(2));
    EXPECT_LT(wait, std::chrono::milliseconds(4400)) << "client-go: JitterUntil(retryPeriod, 1.2)";
    waits.insert(wait);
    clock.Advance(seconds(1));
    EXPECT_EQ(a.elector.Step() - clock.Now(), seconds(2)) << "renewals every retry period";
  }
  EXPECT_GT(waits.size(), 10u);
}

TEST(LeaderElection, ReleaseClosesTheGateBeforeWritingTheLease) {
  FakeClock clock;
  MemLeaseStore store;
  Candidate a(store, clock, "a");
  a.elector.Step();
  std::optional<clock::Clock::Duration> left_at_release;
  store.on_update = [&](const json& lease) {
    if (lease["spec"]["holderIdentity"] == "") left_at_release = a.elector.WriteTimeLeft();
  };
  EXPECT_TRUE(a.elector.Release());
  EXPECT_EQ(left_at_release, clock::Clock::Duration::zero());
}

TEST(LeaderElection, ConfigFollowsClientGoConstraints) {
  LeaderElectionConfig c = Candidate::Config("a");
  EXPECT_EQ(CheckLeaderElectionConfig(c), "");
  c.renew_deadline = seconds(15);
  EXPECT_EQ(CheckLeaderElectionConfig(c), "the lease duration must be greater than the renew deadline");
  c.renew_deadline = seconds(2);
  EXPECT_EQ(CheckLeaderElectionConfig(c), "the renew deadline must be greater than 1.2 times the retry period");
  c.retry_period = seconds(0);
  EXPECT_EQ(CheckLeaderElectionConfig(c), "the retry period must be positive");
  FakeClock clock;
  MemLeaseStore store;
  EXPECT_THROW(LeaderElector(store, clock, c, {}, test::Unread<LeaderElectionMetrics>()), std::invalid_argument);
}

TEST(LeaderElection, DefaultIdentityIsHostnameAndSuffix) {
  const std::string a = DefaultIdentity(), b = DefaultIdentity();
  EXPECT_NE(a, b);
  EXPECT_NE(a.find('_'), std::string::npos);
}

}  // namespace
}  // namespace ms::runtime
