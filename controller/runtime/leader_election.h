// Leader election over a coordination.k8s.io/v1 Lease, after client-go's
// leaderelection package (design.md §3):
//  - lease duration 15 s, renew deadline 10 s, retry period 2 s;
//  - a lease is taken only when it is free (no holder), ours, or expired: its
//    record has not changed for leaseDurationSeconds as measured on OUR
//    clock since we first saw that record (clocks of different machines are
//    never compared);
//  - writes carry the Lease's resourceVersion; a 409 means another candidate
//    won the race and we try again at the next retry;
//  - a leader that cannot renew within the renew deadline stops leading at
//    once (OnStoppedLeading; the program then exits non-zero);
//  - Stop() while leading releases the lease (empty holder, duration 1 s,
//    renewTime now) so that a standby takes over at its next retry.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "base/clock.h"
#include "base/metrics.h"
#include "controller/kube/client.h"

namespace spdlog {
class logger;
}

namespace ms::controller {

// Where the Lease lives. Results keep the HTTP code so 404 and 409 show.
class LeaseStore {
 public:
  virtual ~LeaseStore() = default;
  virtual kube::Result Get() = 0;
  virtual kube::Result Create(const nlohmann::json& lease) = 0;
  // PUT; `lease.metadata.resourceVersion` is the precondition.
  virtual kube::Result Update(const nlohmann::json& lease) = 0;
  virtual std::string Describe() const = 0;  // "ns/name"
};

// /apis/coordination.k8s.io/v1/namespaces/NS/leases/NAME through a kube::Client.
class KubeLeaseStore final : public LeaseStore {
 public:
  KubeLeaseStore(kube::Client& client, std::string ns, std::string name);
  kube::Result Get() override;
  kube::Result Create(const nlohmann::json& lease) override;
  kube::Result Update(const nlohmann::json& lease) override;
  std::string Describe() const override { return ns_ + "/" + name_; }

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
};

// hostname + "_" + a random suffix.
std::string DefaultIdentity();

struct LeaderCallbacks {
  std::function<void()> on_started_leading;  // must not block
  std::function<void()> on_stopped_leading;  // must not block
};

class LeaderElector {
 public:
  enum class State { kFollower, kLeader, kLost, kStopped };

  // With a `registry`, registers leader_election_master_status{name} (one
  // elector per registry).
  LeaderElector(LeaseStore& store, const Clock& clock, LeaderElectionConfig config, LeaderCallbacks callbacks,
                prometheus::Registry* registry = nullptr, std::shared_ptr<spdlog::logger> logger = nullptr);

  // Runs until Stop() or until the lease is lost. Returns kStopped (released
  // if it was leading) or kLost.
  State Run();
  // Asks Run() to return; releases the lease first if leading. Thread-safe.
  void Stop();

  // One step of the loop, for tests and Run(): tries to acquire or renew,
  // updates the state, and returns when the next step is due.
  Clock::TimePoint Step();
  // Gives the lease up if we hold it (see the header comment).
  bool Release();

  bool IsLeader() const;
  State state() const;
  const std::string& identity() const { return config_.identity; }

  // Exposed for tests.
  bool TryAcquireOrRenew();

 private:
  nlohmann::json BuildLease(const nlohmann::json* current, bool ours) const;
  void SetState(State s);

  LeaseStore& store_;
  const Clock& clock_;
  const LeaderElectionConfig config_;
  LeaderCallbacks callbacks_;
  std::shared_ptr<spdlog::logger> logger_;
  prometheus::Gauge* master_status_ = nullptr;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_requested_ = false;
  State state_ = State::kFollower;

  // Touched only by the thread that runs Step()/Release().
  std::string observed_record_;  // the lease spec last seen, serialized
  nlohmann::json observed_spec_;
  Clock::TimePoint observed_time_{};  // when we saw it change, on our clock
  Clock::TimePoint last_renew_{};     // our last successful acquire/renew
  std::string observed_resource_version_;
};

}  // namespace ms::controller
