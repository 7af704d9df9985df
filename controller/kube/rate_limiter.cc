#include "controller/kube/rate_limiter.h"

#include <algorithm>
#include <chrono>

namespace ms::kube {

TokenBucket::TokenBucket(double qps, int burst, Clock::TimePoint now)
    : qps_(qps), burst_(std::max(1, burst)), tokens_(std::max(1, burst)), last_(now) {}

void TokenBucket::Advance(Clock::TimePoint now) {
  if (now <= last_) return;
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
  last_ = now;
}

bool TokenBucket::TryAccept(Clock::TimePoint now) {
  if (unlimited()) return true;
  Advance(now);
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

Clock::Duration TokenBucket::Reserve(Clock::TimePoint now) {
  if (unlimited()) return Clock::Duration::zero();
  Advance(now);
  tokens_ -= 1;
  if (tokens_ >= 0) return Clock::Duration::zero();
  return std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

double TokenBucket::Tokens(Clock::TimePoint now) {
  Advance(now);
  return tokens_;
}

TokenBucketRateLimiter::TokenBucketRateLimiter(double qps, int burst, const Clock& clock)
    : clock_(clock), bucket_(qps, burst, clock.Now()) {}

bool TokenBucketRateLimiter::TryAccept() {
  std::lock_guard<std::mutex> g(mu_);
  return bucket_.TryAccept(clock_.Now());
}

Clock::Duration TokenBucketRateLimiter::Reserve() {
  std::lock_guard<std::mutex> g(mu_);
  return bucket_.Reserve(clock_.Now());
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
  std::unique_lock<std::mutex> lock(mu_);
  const auto now = clock_.Now();
  if (bucket_.unlimited()) return now < deadline;
  const double missing = std::max(0.0, 1 - bucket_.Tokens(now));
  const auto ready =
      now + std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(missing / bucket_.qps()));
  if (ready >= deadline) return false;
  bucket_.Reserve(now);
  while (clock_.Now() < ready) clock_.WaitUntil(cv_, lock, ready);
  return true;
}

double TokenBucketRateLimiter::Tokens() {
  std::lock_guard<std::mutex> g(mu_);
  return bucket_.Tokens(clock_.Now());
}

}  // namespace ms::kube
