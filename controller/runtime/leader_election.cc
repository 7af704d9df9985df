#include "controller/runtime/leader_election.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <random>
#include <stdexcept>
#include <thread>

#include "controller/kube/paths.h"
#include "shared/clock/timefmt.h"

namespace ms::runtime {

using nlohmann::json;

namespace {

// The Lease's spec.holderIdentity; "" when there is none (released), or
// when it is not a string (which the API server does not store).
std::string HolderIdentity(const json& lease) {
  const auto spec = lease.find("spec");
  if (spec == lease.end() || !spec->is_object()) return {};
  const auto holder = spec->find("holderIdentity");
  return holder != spec->end() && holder->is_string() ? holder->get<std::string>() : std::string();
}

}  // namespace

KubeLeaseStore::KubeLeaseStore(kube::Client& client, std::string ns, std::string name)
    : client_(client), ns_(std::move(ns)), name_(std::move(name)) {}

kube::Result KubeLeaseStore::Get(clock::Clock::TimePoint deadline) {
  return client_.Get(kube::ObjectPath("coordination.k8s.io", "v1", "leases", ns_, name_), deadline);
}
kube::Result KubeLeaseStore::Create(const json& lease, clock::Clock::TimePoint deadline) {
  return client_.Create(kube::CollectionPath("coordination.k8s.io", "v1", "leases", ns_), lease, deadline);
}
kube::Result KubeLeaseStore::Update(const json& lease, clock::Clock::TimePoint deadline) {
  return client_.Update(kube::ObjectPath("coordination.k8s.io", "v1", "leases", ns_, name_), lease, deadline);
}

kube::Result KubeLeaseStore::Watch(const OnLease& on_lease, std::stop_token stop) {
  std::string path = kube::CollectionPath("coordination.k8s.io", "v1", "leases", ns_);
  path = kube::WithQuery(path, "watch", "true");
  path = kube::WithQuery(path, "fieldSelector", "metadata.name=" + name_);
  path = kube::WithQuery(path, "timeoutSeconds", "300");
  return client_.Watch(
      path,
      [&on_lease](const kube::WatchEvent& e) {
        if (e.type == "ADDED" || e.type == "MODIFIED") return on_lease(e.object, false);
        if (e.type == "DELETED") return on_lease(e.object, true);
        return e.type == "BOOKMARK";  // an ERROR (410 Gone): watch again
      },
      stop);
}

std::string CheckLeaderElectionConfig(const LeaderElectionConfig& c) {
  using Seconds = std::chrono::duration<double>;
  if (c.retry_period <= std::chrono::seconds::zero()) return "the retry period must be positive";
  if (Seconds(c.renew_deadline) <= 1.2 * Seconds(c.retry_period)) {
    return "the renew deadline must be greater than 1.2 times the retry period";
  }
  if (c.lease_duration <= c.renew_deadline) return "the lease duration must be greater than the renew deadline";
  return "";
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

LeaderElector::LeaderElector(LeaseStore& store, const clock::Clock& clock, LeaderElectionConfig config,
                             LeaderCallbacks callbacks, LeaderElectionMetrics& metrics,
                             std::shared_ptr<spdlog::logger> logger)
    : store_(store),
      clock_(clock),
      config_(std::move(config)),
      callbacks_(std::move(callbacks)),
      logger_(std::move(logger)),
      master_status_(metrics.master_status.Add({{"name", config_.name}})),
      rng_(config_.seed != 0 ? config_.seed : std::random_device{}()) {
  if (const std::string why = CheckLeaderElectionConfig(config_); !why.empty()) throw std::invalid_argument(why);
  master_status_.Set(0);
}

json LeaderElector::BuildLease(const json* current, bool ours) const {
  const std::string now = clock::FormatMicroTime(clock_.WallNow());
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

void LeaderElector::Observe(const json& lease, clock::Clock::TimePoint now) {
  observed_lease_ = lease;
  observed_record_ = lease.value("spec", json::object()).dump();
  observed_time_ = now;
}

std::optional<clock::Clock::TimePoint> LeaderElector::Failed(const char* what, const kube::Result& r) const {
  if (logger_)
    logger_->info("lease {}: {} failed: {} {}", store_.Describe(), what, r.code, r.error ? r.error->message : "");
  return std::nullopt;
}

std::optional<clock::Clock::TimePoint> LeaderElector::TryAcquireOrRenew(clock::Clock::TimePoint deadline) {
  const auto now = clock_.Now();
  // 1. A leader renews with the record it last saw: one request.
  if (IsLeader() && observed_lease_.is_object()) {
    const auto sent = clock_.Now();
    kube::Result updated = store_.Update(BuildLease(&observed_lease_, true), deadline);
    if (updated.ok()) {
      Observe(updated.body, now);
      return sent;
    }
    if (logger_)
      logger_->debug("lease {}: renew with the last seen record failed ({}); reading it", store_.Describe(),
                     updated.code);
  }
  if (clock_.Now() >= deadline) return std::nullopt;

  // 2. Read it, or create it.
  kube::Result got = store_.Get(deadline);
  if (got.IsNotFound()) {
    const auto sent = clock_.Now();
    kube::Result created = store_.Create(BuildLease(nullptr, false), deadline);
    if (!created.ok()) return Failed("create", created);
    Observe(created.body, now);
    return sent;
  }
  if (!got.ok()) return Failed("get", got);
  return TakeOrRenew(got.body, deadline, now);
}

std::optional<clock::Clock::TimePoint> LeaderElector::TakeOrRenew(const json& lease, clock::Clock::TimePoint deadline,
                                                                  clock::Clock::TimePoint now) {
  // 3. Someone else's and not expired on our clock: wait. A record is seen
  // when its read is answered, not when the read was sent (as client-go's
  // setObservedRecord): the read may have waited seconds for a paused or slow
  // server while the holder renewed, and the holder's own writes stay open
  // until renew_deadline after it sent that renewal.
  const auto answered = clock_.Now();
  const json spec = lease.value("spec", json::object());
  if (const std::string raw = spec.dump(); raw != observed_record_) {
    Observe(lease, answered);
  } else {
    observed_lease_ = lease;  // same record, newer metadata: keep when we first saw it
  }
  const std::string holder = HolderIdentity(lease);
  const bool ours = holder == config_.identity;
  const auto duration = std::chrono::seconds(spec.value("leaseDurationSeconds", int64_t{0}));
  if (!holder.empty() && !ours && observed_time_ + duration > answered) {
    return std::nullopt;  // held by someone else and not expired
  }

  // 4. Take or renew it, with its resourceVersion as the precondition.
  const auto sent = clock_.Now();
  if (sent >= deadline) return std::nullopt;
  kube::Result updated = store_.Update(BuildLease(&lease, ours), deadline);
  if (!updated.ok()) return Failed(updated.IsConflict() ? "update (conflict)" : "update", updated);
  Observe(updated.body, now);
  return sent;
}

clock::Clock::Duration LeaderElector::WriteTimeLeft() const {
  const auto until = writes_until_.load(std::memory_order_acquire);
  if (until == kGateClosed) return clock::Clock::Duration::zero();
  return std::max(clock::Clock::Duration::zero(),
                  clock::Clock::TimePoint(clock::Clock::Duration(until)) - clock_.Now());
}

void LeaderElector::CloseGate() { writes_until_.store(kGateClosed, std::memory_order_release); }

clock::Clock::Duration LeaderElector::Jittered(clock::Clock::Duration d) {
  // client-go's wait.Jitter(d, 1.2): d + rand[0,1) * 1.2 * d.
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  return d + std::chrono::duration_cast<clock::Clock::Duration>(1.2 * unit(rng_) * d);
}

void LeaderElector::SetState(State s) {
  if (s != State::kLeader) CloseGate();
  State old;
  {
    std::lock_guard<std::mutex> g(mu_);
    old = state_;
    state_ = s;
  }
  if (old == s) return;
  master_status_.Set(s == State::kLeader ? 1 : 0);
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

clock::Clock::TimePoint LeaderElector::Step() {
  const State s = state();
  const auto start = clock_.Now();
  if (s == State::kLost || s == State::kStopped) return start;
  const bool leading = s == State::kLeader;
  // A leader's attempt ends at its renew deadline; an acquire attempt gets as
  // long as a renewal would.
  const auto deadline = (leading ? last_renew_ : start) + config_.renew_deadline;
  if (leading && start >= deadline) {  // e.g. this process was paused
    SetState(State::kLost);
    return start;
  }
  const std::optional<clock::Clock::TimePoint> sent = TryAcquireOrRenew(deadline);
  const bool ok = sent.has_value();
  const auto after = clock_.Now();
  if (ok && after < deadline) {  // an answer after the deadline counts for nothing
    // Held from when the write that holds it was sent (others time it from
    // when they see it, later): not from the start of this attempt, whose
    // read may have waited long for a slow or paused API server.
    last_renew_ = *sent;
    writes_until_.store((*sent + config_.renew_deadline).time_since_epoch().count(), std::memory_order_release);
    SetState(State::kLeader);
    return after + config_.retry_period;
  }
  if (leading) {
    if (after >= deadline) {
      SetState(State::kLost);
      return after;
    }
    return std::min(after + config_.retry_period, deadline);
  }
  return after + Jittered(config_.retry_period);
}

bool LeaderElector::Release() {
  if (state() != State::kLeader) return false;
  // Nothing may be written once the Lease can be someone else's.
  CloseGate();
  const auto deadline = clock_.Now() + config_.renew_deadline;
  kube::Result got = store_.Get(deadline);
  if (!got.ok()) return false;
  if (HolderIdentity(got.body) != config_.identity) return false;
  const json spec = got.body.value("spec", json::object());
  const std::string now = clock::FormatMicroTime(clock_.WallNow());
  json lease = got.body;
  lease["spec"] = {{"holderIdentity", ""},
                   {"leaseDurationSeconds", 1},
                   {"acquireTime", now},
                   {"renewTime", now},
                   {"leaseTransitions", spec.value("leaseTransitions", int64_t{0})}};
  kube::Result r = store_.Update(lease, deadline);
  if (!r.ok()) {
    if (logger_) logger_->warn("lease {}: release failed: {}", store_.Describe(), r.code);
    return false;
  }
  if (logger_) logger_->info("lease {}: released", store_.Describe());
  return true;
}

namespace {

// A Lease without a holder (released), or none at all (deleted).
bool IsFree(const json& lease, bool deleted) { return deleted || HolderIdentity(lease).empty(); }

}  // namespace

void LeaderElector::WatchForRelease(std::stop_token stop) {
  std::stop_callback wake(stop, [this] {
    std::lock_guard<std::mutex> g(mu_);
    cv_.notify_all();
  });
  while (!stop.stop_requested()) {
    const auto began = clock_.Now();
    store_.Watch(
        [this](const json& lease, bool deleted) {
          if (!IsFree(lease, deleted)) return true;
          std::lock_guard<std::mutex> g(mu_);
          if (state_ == State::kFollower) {
            released_seen_ = true;
            cv_.notify_all();
          }
          return true;
        },
        stop);
    std::unique_lock<std::mutex> lock(mu_);
    const auto until = began + config_.retry_period;
    while (!stop.stop_requested() && clock_.Now() < until) clock_.WaitUntil(cv_, lock, until);
  }
}

LeaderElector::State LeaderElector::Run() {
  std::jthread watch;
  if (store_.CanWatch()) watch = std::jthread([this](std::stop_token stop) { WatchForRelease(stop); });
  while (true) {
    const auto next = Step();
    std::unique_lock<std::mutex> lock(mu_);
    if (state_ == State::kLost) return State::kLost;
    while (!stop_requested_ && !released_seen_ && clock_.Now() < next) clock_.WaitUntil(cv_, lock, next);
    released_seen_ = false;
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

}  // namespace ms::runtime
