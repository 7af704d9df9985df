#include "controller/kube/rate_limiter.h"

#include <algorithm>
#include <chrono>

namespace ms::kube {

TokenBucketRateLimiter::TokenBucketRateLimiter(double qps, int burst, const Clock& clock)
    : qps_(qps), burst_(std::max(1, burst)), clock_(clock), tokens_(std::max(1, burst)), last_(clock.Now()) {}

void TokenBucketRateLimiter::AdvanceLocked(Clock::TimePoint now) {
  if (now <= last_) return;
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
  last_ = now;
}

bool TokenBucketRateLimiter::TryAccept() {
  if (qps_ <= 0) return true;
  std::lock_guard<std::mutex> g(mu_);
  AdvanceLocked(clock_.Now());
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

Clock::Duration TokenBucketRateLimiter::Reserve() {
  if (qps_ <= 0) return Clock::Duration::zero();
  std::lock_guard<std::mutex> g(mu_);
  AdvanceLocked(clock_.Now());
  tokens_ -= 1;
  if (tokens_ >= 0) return Clock::Duration::zero();
  return std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

bool TokenBucketRateLimiter::Wait(const std::atomic<bool>* stop) {
  const auto delay = Reserve();
  if (delay <= Clock::Duration::zero()) return true;
  const auto deadline = clock_.Now() + delay;
  std::unique_lock<std::mutex> lock(mu_);
  while (clock_.Now() < deadline) {
    if (stop != nullptr && stop->load()) return false;
    // Bounded waits so that `stop` is noticed (nothing notifies cv_).
    const auto step = std::min<Clock::TimePoint>(deadline, clock_.Now() + std::chrono::milliseconds(50));
    clock_.WaitUntil(cv_, lock, step);
  }
  return true;
}

bool TokenBucketRateLimiter::WaitBefore(Clock::TimePoint deadline) {
  if (qps_ <= 0) return clock_.Now() < deadline;
  std::unique_lock<std::mutex> lock(mu_);
  const auto now = clock_.Now();
  AdvanceLocked(now);
  const double missing = std::max(0.0, 1 - tokens_);
  const auto ready = now + std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(missing / qps_));
  if (ready >= deadline) return false;
  tokens_ -= 1;
  while (clock_.Now() < ready) clock_.WaitUntil(cv_, lock, ready);
  return true;
}

double TokenBucketRateLimiter::Tokens() {
  std::lock_guard<std::mutex> g(mu_);
  AdvanceLocked(clock_.Now());
  return tokens_;
}

}  // namespace ms::kube
