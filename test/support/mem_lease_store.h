// An in-memory Lease with the API server's optimistic concurrency, shared by
// several candidates, plus scripted failures; and a view of it through a
// network that can hang (per candidate).
#pragma once

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "controller/runtime/leader_election.h"
#include "test/support/fake_clock.h"

namespace ms::test {

class MemLeaseStore final : public runtime::LeaseStore {
 public:
  kube::Result Get(clock::Clock::TimePoint deadline) override {
    std::lock_guard<std::mutex> g(mu_);
    gets++;
    deadlines.push_back(deadline);
    if (down) return Err(0, "Transport");
    if (!lease) return Err(404, "NotFound");
    return {200, *lease, std::nullopt};
  }
  kube::Result Create(const nlohmann::json& l, clock::Clock::TimePoint deadline) override {
    std::lock_guard<std::mutex> g(mu_);
    deadlines.push_back(deadline);
    if (down) return Err(0, "Transport");
    if (lease) return Err(409, "AlreadyExists");
    lease = l;
    (*lease)["metadata"]["resourceVersion"] = std::to_string(++rv);
    changed_.notify_all();
    return {201, *lease, std::nullopt};
  }
  kube::Result Update(const nlohmann::json& l, clock::Clock::TimePoint deadline) override {
    std::lock_guard<std::mutex> g(mu_);
    updates++;
    deadlines.push_back(deadline);
    if (on_update) on_update(l);
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
    changed_.notify_all();
    return {200, *lease, std::nullopt};
  }
  std::string Describe() const override { return "ns/lease"; }
  // With `watchable`: each version of the Lease as it is written (the
  // current one first, none while there is none), until stopped.
  bool CanWatch() const override { return watchable; }
  kube::Result Watch(const OnLease& on_lease, std::stop_token stop) override {
    std::unique_lock<std::mutex> lock(mu_);
    watches++;
    if (on_watch) on_watch();
    int seen = 0;
    while (changed_.wait(lock, stop, [&] { return rv != seen; })) {
      seen = rv;
      const nlohmann::json l = *lease;
      lock.unlock();
      const bool go = on_lease(l, false);
      lock.lock();
      if (!go) break;
    }
    return {200, nlohmann::json(), std::nullopt};
  }

  nlohmann::json Spec() {
    std::lock_guard<std::mutex> g(mu_);
    return lease ? (*lease)["spec"] : nlohmann::json();
  }
  std::string Holder() { return Spec().value("holderIdentity", ""); }

  static kube::Result Err(int code, const std::string& reason) {
    return {code, nlohmann::json(), kube::Status{code, reason, reason}};
  }

  std::mutex mu_;
  std::optional<nlohmann::json> lease;
  int rv = 0;
  bool down = false;
  bool conflict_next = false;
  bool watchable = false;
  int gets = 0, updates = 0, watches = 0;
  std::vector<clock::Clock::TimePoint> deadlines;        // of every call, in order
  std::function<void(const nlohmann::json&)> on_update;  // called with each PUT's body (under the lock)
  std::function<void()> on_watch;                        // called as each watch begins (under the lock)

 private:
  std::condition_variable_any changed_;  // rv moved
};

// One candidate's path to a shared MemLeaseStore. When `partitioned`, every
// call hangs: with Hang::kUntilDeadline it takes until its deadline (virtual
// time moves there, as the elector's bounded HTTP client would) and fails;
// with Hang::kBlocked it blocks the calling thread until Heal() (a request
// with no deadline at all) and then fails.
class NetworkedLeaseStore final : public runtime::LeaseStore {
 public:
  enum class Hang { kUntilDeadline, kBlocked };
  NetworkedLeaseStore(MemLeaseStore& store, FakeClock& clock) : store_(store), clock_(clock) {}

  void Partition(Hang how) {
    std::lock_guard<std::mutex> g(mu_);
    partitioned_ = true;
    hang_ = how;
  }
  void Heal() {
    std::lock_guard<std::mutex> g(mu_);
    partitioned_ = false;
    cv_.notify_all();
  }
  // Waits (real time, capped) until a call is blocked in Hang::kBlocked.
  bool WaitUntilBlocked() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(30), [this] { return blocked_ > 0; });
  }
  std::vector<clock::Clock::TimePoint> hung_deadlines() {
    std::lock_guard<std::mutex> g(mu_);
    return hung_deadlines_;
  }

  kube::Result Get(clock::Clock::TimePoint deadline) override {
    if (auto r = MaybeHang(deadline)) return *r;
    return store_.Get(deadline);
  }
  kube::Result Create(const nlohmann::json& l, clock::Clock::TimePoint deadline) override {
    if (auto r = MaybeHang(deadline)) return *r;
    return store_.Create(l, deadline);
  }
  kube::Result Update(const nlohmann::json& l, clock::Clock::TimePoint deadline) override {
    if (auto r = MaybeHang(deadline)) return *r;
    return store_.Update(l, deadline);
  }
  std::string Describe() const override { return store_.Describe(); }

 private:
  std::optional<kube::Result> MaybeHang(clock::Clock::TimePoint deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!partitioned_) return std::nullopt;
    hung_deadlines_.push_back(deadline);
    if (hang_ == Hang::kUntilDeadline) {
      lock.unlock();
      if (clock_.Now() < deadline) clock_.Advance(deadline - clock_.Now());
      return MemLeaseStore::Err(0, "Timeout");
    }
    blocked_++;
    cv_.notify_all();
    cv_.wait(lock, [this] { return !partitioned_; });
    blocked_--;
    return MemLeaseStore::Err(0, "Transport");
  }

  MemLeaseStore& store_;
  FakeClock& clock_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool partitioned_ = false;
  Hang hang_ = Hang::kUntilDeadline;
  int blocked_ = 0;
  std::vector<clock::Clock::TimePoint> hung_deadlines_;
};

}  // namespace ms::test
