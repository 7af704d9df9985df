// Leader election over a coordination.k8s.io/v1 Lease, after client-go's
// leaderelection package (design.md §3):
//  - lease duration 15 s, renew deadline 10 s, retry period 2 s;
//  - a lease is taken only when it is free (no holder), ours, or expired: its
//    record has not changed for leaseDurationSeconds as measured on OUR
//    clock since we first saw that record (clocks of different machines are
//    never compared);
//  - writes carry the Lease's resourceVersion; a 409 means another candidate
//    won the race and we try again at the next retry;
//  - every attempt (Get, Create, Update of the Lease) ends by a deadline: a
//    leader's is its renew deadline (when the write of its last successful
//    renew was sent + renew deadline), an acquire attempt gets as long; a leader renews first
//    with the record it last saw (one PUT) and reads the Lease only when that
//    fails, as client-go does;
//  - a leader that cannot renew within the renew deadline stops leading at
//    once (OnStoppedLeading; the program then exits non-zero);
//  - the elector is the controller's WriteGate: writes may leave the process
//    only while the time since the write of the last successful acquire or
//    renew was sent is below the renew deadline (not since the attempt began:
//    its read may have waited long for a slow or paused API server), computed from the monotonic clock at the moment of
//    each write, not from a state this elector's thread sets (which may run
//    late: a paused process, a hung request). Another candidate can take the
//    Lease only a full lease duration after it saw our last renew, so the gate
//    closes lease_duration - renew_deadline (5 s) before that;
//  - acquire retries wait retry_period * (1 + 1.2 * rand[0,1)) like client-go's
//    JitterUntil; renewals run every retry_period;
//  - Stop() while leading closes the gate, then releases the lease (empty
//    holder, duration 1 s, renewTime now); a standby watches the Lease
//    (a WATCH of it alone, by field selector) and tries at once when it sees
//    it released or deleted, instead of at its next retry (2-4.4 s later):
//    a rollout hands over in the time of one request. Without the rights
//    to watch, or while the watch fails, the retries alone find it.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stop_token>
#include <string>

#include "controller/kube/client.h"
#include "controller/kube/http_client.h"
#include "controller/kube/write_gate.h"
#include "controller/runtime/metrics.h"
#include "shared/clock/clock.h"

namespace spdlog {
class logger;
}

namespace ms::runtime {

// Where the Lease lives. Results keep the HTTP code so 404 and 409 show.
// Each call is over by `deadline` (on the elector's clock): a request not
// answered by then is abandoned and fails.
class LeaseStore {
 public:
  virtual ~LeaseStore() = default;
  virtual kube::Result Get(clock::Clock::TimePoint deadline) = 0;
  virtual kube::Result Create(const nlohmann::json& lease, clock::Clock::TimePoint deadline) = 0;
  // PUT; `lease.metadata.resourceVersion` is the precondition.
  virtual kube::Result Update(const nlohmann::json& lease, clock::Clock::TimePoint deadline) = 0;
  virtual std::string Describe() const = 0;  // "ns/name"
  // Streams the Lease's changes (each version of it as it is written, the
  // current one first; `deleted` true for its deletion) until the stream
  // ends, fails, `on_lease` returns false or `stop` is requested. Only
  // called when CanWatch().
  using OnLease = std::function<bool(const nlohmann::json& lease, bool deleted)>;
  virtual bool CanWatch() const { return false; }
  virtual kube::Result Watch(const OnLease& on_lease, std::stop_token stop) {
    (void)on_lease;
    (void)stop;
    return {};
  }
};

// /apis/coordination.k8s.io/v1/namespaces/NS/leases/NAME through the
// elector's own HttpClient: its own connections and token bucket (the
// controller's requests never delay a renewal) and no WriteGate.
class KubeLeaseStore final : public LeaseStore {
 public:
  KubeLeaseStore(kube::Client& client, std::string ns, std::string name);
  kube::Result Get(clock::Clock::TimePoint deadline) override;
  kube::Result Create(const nlohmann::json& lease, clock::Clock::TimePoint deadline) override;
  kube::Result Update(const nlohmann::json& lease, clock::Clock::TimePoint deadline) override;
  std::string Describe() const override { return ns_ + "/" + name_; }
  // ?watch=true&fieldSelector=metadata.name=NAME, 5 minutes a stream.
  bool CanWatch() const override { return true; }
  kube::Result Watch(const OnLease& on_lease, std::stop_token stop) override;

 private:
  kube::Client& client_;
  std::string ns_, name_;
};

struct LeaderElectionConfig {
  std::string name;      // the Lease name (--leader-election-id)
  std::string ns;        // its namespace
  std::string identity;  // holderIdentity; see DefaultIdentity()
  std::chrono::seconds lease_duration{15};
  std::chrono::seconds renew_deadline{10};
  std::chrono::seconds retry_period{2};
  uint64_t seed = 0;  // for the acquire retries' jitter; 0: random
};

// client-go's constraints: lease_duration > renew_deadline >
// 1.2 * retry_period > 0. Empty when valid, else what is wrong.
std::string CheckLeaderElectionConfig(const LeaderElectionConfig& config);

// hostname + "_" + a random suffix.
std::string DefaultIdentity();

struct LeaderCallbacks {
  std::function<void()> on_started_leading;  // must not block
  std::function<void()> on_stopped_leading;  // must not block
};

class LeaderElector final : public kube::WriteGate {
 public:
  enum class State { kFollower, kLeader, kLost, kStopped };

  // Reports leader_election_master_status{name=config.name}. Throws
  // std::invalid_argument when the config fails CheckLeaderElectionConfig.
  LeaderElector(LeaseStore& store, const clock::Clock& clock, LeaderElectionConfig config, LeaderCallbacks callbacks,
                LeaderElectionMetrics& metrics, std::shared_ptr<spdlog::logger> logger = nullptr);

  // Runs until Stop() or until the lease is lost. Returns kStopped (released
  // if it was leading) or kLost.
  State Run();
  // Asks Run() to return; releases the lease first if leading. Thread-safe.
  void Stop();

  // One step of the loop, for tests and Run(): tries to acquire or renew,
  // updates the state, and returns when the next step is due.
  clock::Clock::TimePoint Step();
  // Gives the lease up if we hold it (see the header comment).
  bool Release();

  bool IsLeader() const;
  State state() const;
  const std::string& identity() const { return config_.identity; }

  // kube::WriteGate: while leading, the renew deadline minus the time since
  // the write of the last successful acquire/renew was sent, from the clock
  // now; zero when not leading. Thread-safe, lock-free.
  clock::Clock::Duration WriteTimeLeft() const override;

  // One acquire/renew attempt, every request bounded by `deadline`: the time
  // the write that acquired or renewed the Lease was sent, or none. Exposed
  // for tests.
  std::optional<clock::Clock::TimePoint> TryAcquireOrRenew(clock::Clock::TimePoint deadline);

 private:
  nlohmann::json BuildLease(const nlohmann::json* current, bool ours) const;
  // Steps 3 and 4 of TryAcquireOrRenew on the Lease read: take it if free or
  // expired (or renew it if ours).
  std::optional<clock::Clock::TimePoint> TakeOrRenew(const nlohmann::json& lease, clock::Clock::TimePoint deadline,
                                                     clock::Clock::TimePoint now);
  std::optional<clock::Clock::TimePoint> Failed(const char* what, const kube::Result& r) const;
  void Observe(const nlohmann::json& lease, clock::Clock::TimePoint now);
  void SetState(State s);
  void CloseGate();
  // The standby's watch of the Lease (on a thread of Run()'s): wakes Run()
  // when the Lease is released or deleted; a stream that failed or lasted
  // less than a retry period is followed by the next one a retry period
  // after it began.
  void WatchForRelease(std::stop_token stop);
  clock::Clock::Duration Jittered(clock::Clock::Duration d);

  LeaseStore& store_;
  const clock::Clock& clock_;
  const LeaderElectionConfig config_;
  LeaderCallbacks callbacks_;
  std::shared_ptr<spdlog::logger> logger_;
  prometheus::Gauge& master_status_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_requested_ = false;
  bool released_seen_ = false;  // the watch saw the Lease free: try now
  State state_ = State::kFollower;

  // When writes stop: when the write of the last successful acquire/renew
  // was sent plus the renew deadline, as Clock::TimePoint::time_since_epoch().count();
  // kGateClosed when not leading.
  static constexpr clock::Clock::Duration::rep kGateClosed = std::numeric_limits<clock::Clock::Duration::rep>::min();
  std::atomic<clock::Clock::Duration::rep> writes_until_{kGateClosed};

  // Touched only by the thread that runs Step()/Release().
  std::string observed_record_;              // the lease spec last seen, serialized
  nlohmann::json observed_lease_;            // the whole Lease last seen (for a leader's renew)
  clock::Clock::TimePoint observed_time_{};  // when we saw the spec change, on our clock
  clock::Clock::TimePoint last_renew_{};     // when the write of our last successful acquire/renew was sent
  std::mt19937_64 rng_;
};

}  // namespace ms::runtime
