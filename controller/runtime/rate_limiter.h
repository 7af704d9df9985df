// Rate limiters for the work queue, after client-go's workqueue package:
// per-item exponential backoff, an overall token bucket, and the max of
// several. All take time from an injected ms::Clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/clock.h"

namespace ms::controller {

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // How long `item` should wait before it is processed again; records a
  // failure for per-item limiters.
  virtual Clock::Duration When(const std::string& item) = 0;
  // Stops tracking `item` (it succeeded).
  virtual void Forget(const std::string& item) = 0;
  // Failures recorded for `item` since the last Forget.
  virtual int NumRequeues(const std::string& item) = 0;
};

// base * 2^failures, capped at max_delay.
class ItemExponentialFailureRateLimiter final : public RateLimiter {
 public:
  ItemExponentialFailureRateLimiter(Clock::Duration base, Clock::Duration max_delay) : base_(base), max_(max_delay) {}

  Clock::Duration When(const std::string& item) override {
    std::lock_guard<std::mutex> g(mu_);
    const int exp = failures_[item]++;
    // Compute in double to avoid overflow for large exponents.
    const double delay = static_cast<double>(base_.count()) * std::pow(2.0, exp);
    if (delay >= static_cast<double>(max_.count())) return max_;
    return Clock::Duration(static_cast<Clock::Duration::rep>(delay));
  }
  void Forget(const std::string& item) override {
    std::lock_guard<std::mutex> g(mu_);
    failures_.erase(item);
  }
  int NumRequeues(const std::string& item) override {
    std::lock_guard<std::mutex> g(mu_);
    auto it = failures_.find(item);
    return it == failures_.end() ? 0 : it->second;
  }

 private:
  Clock::Duration base_, max_;
  std::mutex mu_;
  std::map<std::string, int> failures_;
};

// An overall token bucket (golang.org/x/time/rate semantics: a reservation
// always succeeds and the bucket may go into debt; the delay is the time
// until the debt is paid).
class BucketRateLimiter final : public RateLimiter {
 public:
  BucketRateLimiter(const Clock& clock, double qps, int burst)
      : clock_(clock), qps_(qps), burst_(burst), tokens_(burst), last_(clock.Now()) {}

  Clock::Duration When(const std::string&) override {
    std::lock_guard<std::mutex> g(mu_);
    const auto now = clock_.Now();
    if (now > last_) {
      const double elapsed = std::chrono::duration<double>(now - last_).count();
      tokens_ = std::min<double>(burst_, tokens_ + elapsed * qps_);
      last_ = now;
    }
    tokens_ -= 1.0;
    if (tokens_ >= 0) return Clock::Duration::zero();
    return std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(-tokens_ / qps_));
  }
  void Forget(const std::string&) override {}
  int NumRequeues(const std::string&) override { return 0; }

 private:
  const Clock& clock_;
  const double qps_;
  const int burst_;
  std::mutex mu_;
  double tokens_;
  Clock::TimePoint last_;
};

// The longest delay of its limiters; requeues are the highest count.
class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters) : limiters_(std::move(limiters)) {}

  Clock::Duration When(const std::string& item) override {
    Clock::Duration d = Clock::Duration::zero();
    for (auto& l : limiters_) d = std::max(d, l->When(item));
    return d;
  }
  void Forget(const std::string& item) override {
    for (auto& l : limiters_) l->Forget(item);
  }
  int NumRequeues(const std::string& item) override {
    int n = 0;
    for (auto& l : limiters_) n = std::max(n, l->NumRequeues(item));
    return n;
  }

 private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

// client-go's DefaultControllerRateLimiter: per-item 5 ms .. 1000 s, max'ed
// with an overall 10 qps / burst 100 bucket.
inline std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(const Clock& clock) {
  std::vector<std::unique_ptr<RateLimiter>> v;
  v.push_back(
      std::make_unique<ItemExponentialFailureRateLimiter>(std::chrono::milliseconds(5), std::chrono::seconds(1000)));
  v.push_back(std::make_unique<BucketRateLimiter>(clock, 10.0, 100));
  return std::make_unique<MaxOfRateLimiter>(std::move(v));
}

}  // namespace ms::controller
