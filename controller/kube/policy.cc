#include "controller/kube/policy.h"

#include <algorithm>

#include "controller/kube/paths.h"

namespace ms::kube {

RequestPolicy::RequestPolicy(double qps, int burst, const clock::Clock& clock, clock::Clock::Duration request_timeout,
                             const WriteGate* gate)
    : qps_(qps), burst_(burst), clock_(clock), request_timeout_(request_timeout), gate_(gate) {}

TokenBucketRateLimiter& RequestPolicy::Limiter(const std::string& path) {
  std::string gv = GroupVersionOf(path);
  std::lock_guard<std::mutex> g(mu_);
  auto& slot = limiters_[std::move(gv)];
  if (!slot) slot = std::make_unique<TokenBucketRateLimiter>(qps_, burst_, clock_);
  return *slot;
}

const char* RequestPolicy::Admit(const Call& call) {
  if (Limiter(call.path).Acquire(call.deadline, closing_.get_token())) return nullptr;
  return closing_.stop_requested() ? kReasonClosed : kReasonDeadline;
}

const char* RequestPolicy::Refusal(const Call& call) const {
  if (closing_.stop_requested()) return kReasonClosed;
  if (call.deadline && clock_.Now() >= *call.deadline) return kReasonDeadline;
  if (gate_ != nullptr && call.IsWrite() && gate_->WriteTimeLeft() <= clock::Clock::Duration::zero())
    return kReasonNotLeader;
  return nullptr;
}

RequestPolicy::TimeLimit RequestPolicy::LimitOf(const Call& call) const {
  TimeLimit t{request_timeout_};
  if (call.deadline && *call.deadline - clock_.Now() < t.limit) t = {*call.deadline - clock_.Now(), kReasonDeadline};
  if (gate_ != nullptr && call.IsWrite()) {
    const clock::Clock::Duration left = gate_->WriteTimeLeft();
    if (left < t.limit) t = {left, kReasonNotLeader};
  }
  return t;
}

bool RequestPolicy::AwaitRetry(const Call& call, clock::Clock::Duration retry_after) {
  const clock::Clock::Duration wait = std::min<clock::Clock::Duration>(retry_after, kMaxRetryAfter);
  const clock::Clock::TimePoint until = clock_.Now() + wait;
  if (call.deadline && until >= *call.deadline) return false;
  std::unique_lock<std::mutex> lock(mu_);
  while (!closing_.stop_requested() && clock_.Now() < until) clock_.WaitUntil(retry_cv_, lock, until);
  return !closing_.stop_requested();
}

void RequestPolicy::Close() {
  closing_.request_stop();
  std::lock_guard<std::mutex> g(mu_);
  retry_cv_.notify_all();
}

const char* RequestPolicy::Explain(const char* reason) {
  if (reason == kReasonNotLeader) return "this process does not hold the leader Lease";
  if (reason == kReasonClosed) return "the client is closed";
  return "the request's deadline has passed";
}

}  // namespace ms::kube
