#include "controller/runtime/leader_election.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <random>

#include "base/timefmt.h"
#include "controller/kube/paths.h"

namespace ms::controller {

using nlohmann::json;

KubeLeaseStore::KubeLeaseStore(kube::Client& client, std::string ns, std::string name)
    : client_(client), ns_(std::move(ns)), name_(std::move(name)) {}

kube::Result KubeLeaseStore::Get() {
  return client_.Get(kube::ObjectPath("coordination.k8s.io", "v1", "leases", ns_, name_));
}
kube::Result KubeLeaseStore::Create(const json& lease) {
  return client_.Create(kube::CollectionPath("coordination.k8s.io", "v1", "leases", ns_), lease);
}
kube::Result KubeLeaseStore::Update(const json& lease) {
  return client_.Update(kube::ObjectPath("coordination.k8s.io", "v1", "leases", ns_, name_), lease);
}

std::string DefaultIdentity() {
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::snprintf(host, sizeof host, "unknown");
  std::random_device rd;
  std::uniform_int_distribution<int> dist(0, 15);
  std::string suffix;
  for (int i = 0; i < 8; ++i) suffix += "0123456789abcdef"[dist(rd)];
  return std::string(host) + "_" + suffix;
}

LeaderElector::LeaderElector(LeaseStore& store, const Clock& clock, LeaderElectionConfig config,
                             LeaderCallbacks callbacks, prometheus::Registry* registry,
                             std::shared_ptr<spdlog::logger> logger)
    : store_(store),
      clock_(clock),
      config_(std::move(config)),
      callbacks_(std::move(callbacks)),
      logger_(std::move(logger)) {
  if (registry != nullptr) {
    auto& family = prometheus::BuildGauge()
                       .Name("leader_election_master_status")
                       .Help(
                           "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 "
                           "indicates master. 'name' is the string used to identify the lease.")
                       .Register(*registry);
    master_status_ = &family.Add({{"name", config_.name}});
    master_status_->Set(0);
  }
}

json LeaderElector::BuildLease(const json* current, bool ours) const {
  const std::string now = FormatMicroTime(clock_.WallNow());
  json lease = current != nullptr ? *current
                                  : json{{"apiVersion", "coordination.k8s.io/v1"},
                                         {"kind", "Lease"},
                                         {"metadata", {{"name", config_.name}, {"namespace", config_.ns}}},
                                         {"spec", json::object()}};
  json& spec = lease["spec"];
  const json old = spec;
  const int64_t transitions = old.value("leaseTransitions", int64_t{0});
  spec["holderIdentity"] = config_.identity;
  spec["leaseDurationSeconds"] = static_cast<int64_t>(config_.lease_duration.count());
  spec["renewTime"] = now;
  if (!ours || !old.contains("acquireTime")) spec["acquireTime"] = now;
  spec["leaseTransitions"] = current == nullptr ? 0 : (ours ? transitions : transitions + 1);
  return lease;
}

bool LeaderElector::TryAcquireOrRenew() {
  const auto now = clock_.Now();
  kube::Result got = store_.Get();
  if (got.IsNotFound()) {
    kube::Result created = store_.Create(BuildLease(nullptr, false));
    if (!created.ok()) {
      if (logger_)
        logger_->info("lease {}: create failed: {} {}", store_.Describe(), created.code,
                      created.error ? created.error->message : "");
      return false;
    }
    observed_spec_ = created.body.value("spec", json::object());
    observed_record_ = observed_spec_.dump();
    observed_time_ = now;
    observed_resource_version_ = kube::ResourceVersionOf(created.body);
    return true;
  }
  if (!got.ok()) {
    if (logger_)
      logger_->warn("lease {}: get failed: {} {}", store_.Describe(), got.code, got.error ? got.error->message : "");
    return false;
  }

  const json spec = got.body.value("spec", json::object());
  const std::string raw = spec.dump();
  if (raw != observed_record_) {
    observed_record_ = raw;
    observed_spec_ = spec;
    observed_time_ = now;
  }
  observed_resource_version_ = kube::ResourceVersionOf(got.body);
  const std::string holder = spec.value("holderIdentity", "");
  const bool ours = holder == config_.identity;
  const auto duration = std::chrono::seconds(spec.value("leaseDurationSeconds", int64_t{0}));
  if (!holder.empty() && !ours && observed_time_ + duration > now) {
    return false;  // held by someone else and not expired
  }

  json lease = BuildLease(&got.body, ours);
  kube::Result updated = store_.Update(lease);
  if (!updated.ok()) {
    if (logger_) {
      logger_->info("lease {}: update failed{}: {} {}", store_.Describe(), updated.IsConflict() ? " (conflict)" : "",
                    updated.code, updated.error ? updated.error->message : "");
    }
    return false;
  }
  observed_spec_ = updated.body.value("spec", lease["spec"]);
  observed_record_ = observed_spec_.dump();
  observed_time_ = now;
  observed_resource_version_ = kube::ResourceVersionOf(updated.body);
  return true;
}

void LeaderElector::SetState(State s) {
  State old;
  {
    std::lock_guard<std::mutex> g(mu_);
    old = state_;
    state_ = s;
  }
  if (old == s) return;
  if (master_status_ != nullptr) master_status_->Set(s == State::kLeader ? 1 : 0);
  if (s == State::kLeader) {
    if (logger_) logger_->info("lease {}: became leader as {}", store_.Describe(), config_.identity);
    if (callbacks_.on_started_leading) callbacks_.on_started_leading();
  } else if (old == State::kLeader) {
    if (logger_) {
      if (s == State::kLost) {
        logger_->error("lease {}: lost leadership (could not renew within {}s)", store_.Describe(),
                       config_.renew_deadline.count());
      } else {
        logger_->info("lease {}: stopped leading", store_.Describe());
      }
    }
    if (callbacks_.on_stopped_leading) callbacks_.on_stopped_leading();
  }
}

Clock::TimePoint LeaderElector::Step() {
  const State s = state();
  const auto now = clock_.Now();
  if (s == State::kLost || s == State::kStopped) return now;
  const bool ok = TryAcquireOrRenew();
  const auto after = clock_.Now();
  if (ok) {
    last_renew_ = now;
    SetState(State::kLeader);
    return after + config_.retry_period;
  }
  if (s == State::kLeader) {
    const auto deadline = last_renew_ + config_.renew_deadline;
    if (after >= deadline) {
      SetState(State::kLost);
      return after;
    }
    return std::min(after + config_.retry_period, deadline);
  }
  return after + config_.retry_period;
}

bool LeaderElector::Release() {
  if (state() != State::kLeader) return false;
  kube::Result got = store_.Get();
  if (!got.ok()) return false;
  json spec = got.body.value("spec", json::object());
  if (spec.value("holderIdentity", "") != config_.identity) return false;
  const std::string now = FormatMicroTime(clock_.WallNow());
  json lease = got.body;
  lease["spec"] = {{"holderIdentity", ""},
                   {"leaseDurationSeconds", 1},
                   {"acquireTime", now},
                   {"renewTime", now},
                   {"leaseTransitions", spec.value("leaseTransitions", int64_t{0})}};
  kube::Result r = store_.Update(lease);
  if (!r.ok()) {
    if (logger_) logger_->warn("lease {}: release failed: {}", store_.Describe(), r.code);
    return false;
  }
  if (logger_) logger_->info("lease {}: released", store_.Describe());
  return true;
}

LeaderElector::State LeaderElector::Run() {
  while (true) {
    const auto next = Step();
    std::unique_lock<std::mutex> lock(mu_);
    if (state_ == State::kLost) return State::kLost;
    while (!stop_requested_ && clock_.Now() < next) clock_.WaitUntil(cv_, lock, next);
    if (stop_requested_) {
      lock.unlock();
      Release();
      SetState(State::kStopped);
      return State::kStopped;
    }
  }
}

void LeaderElector::Stop() {
  std::lock_guard<std::mutex> g(mu_);
  stop_requested_ = true;
  cv_.notify_all();
}

bool LeaderElector::IsLeader() const { return state() == State::kLeader; }

LeaderElector::State LeaderElector::state() const {
  std::lock_guard<std::mutex> g(mu_);
  return state_;
}

}  // namespace ms::controller
