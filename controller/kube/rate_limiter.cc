#include "controller/kube/rate_limiter.h"

#include <algorithm>
#include <chrono>

namespace ms::kube {

TokenBucket::TokenBucket(double qps, int burst, clock::Clock::TimePoint now)
    : qps_(qps), burst_(std::max(1, burst)), tokens_(std::max(1, burst)), last_(now) {}

void TokenBucket::Advance(clock::Clock::TimePoint now) {
  if (now <= last_) return;
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
  last_ = now;
}

bool TokenBucket::TryAccept(clock::Clock::TimePoint now) {
  if (unlimited()) return true;
  Advance(now);
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

clock::Clock::Duration TokenBucket::Reserve(clock::Clock::TimePoint now) {
  if (unlimited()) return clock::Clock::Duration::zero();
  Advance(now);
  tokens_ -= 1;
  if (tokens_ >= 0) return clock::Clock::Duration::zero();
  return std::chrono::duration_cast<clock::Clock::Duration>(std::chrono::duration<double>(-tokens_ / qps_));
}

double TokenBucket::Tokens(clock::Clock::TimePoint now) {
  Advance(now);
  return tokens_;
}

TokenBucketRateLimiter::TokenBucketRateLimiter(double qps, int burst, const clock::Clock& clock)
    : clock_(clock), bucket_(qps, burst, clock.Now()) {}

bool TokenBucketRateLimiter::TryAccept() {
  std::lock_guard<std::mutex> g(mu_);
  return bucket_.TryAccept(clock_.Now());
}

clock::Clock::Duration TokenBucketRateLimiter::Reserve() {
  std::lock_guard<std::mutex> g(mu_);
  return bucket_.Reserve(clock_.Now());
}

bool TokenBucketRateLimiter::Acquire(std::optional<clock::Clock::TimePoint> deadline, std::stop_token stop) {
  // Made before the lock: it runs at once, here, when a stop was requested already.
  std::stop_callback wake(stop, [this] {
    std::lock_guard<std::mutex> g(mu_);
    cv_.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu_);
  const auto now = clock_.Now();
  if (bucket_.unlimited()) return !deadline || now < *deadline;
  if (deadline) {
    const double missing = std::max(0.0, 1 - bucket_.Tokens(now));
    const auto available = now + std::chrono::duration_cast<clock::Clock::Duration>(
                                     std::chrono::duration<double>(missing / bucket_.qps()));
    if (available >= *deadline) return false;
  }
  const auto ready = now + bucket_.Reserve(now);
  while (clock_.Now() < ready) {
    if (stop.stop_requested()) return false;
    clock_.WaitUntil(cv_, lock, ready);
  }
  return true;
}

double TokenBucketRateLimiter::Tokens() {
  std::lock_guard<std::mutex> g(mu_);
  return bucket_.Tokens(clock_.Now());
}

}  // namespace ms::kube
