// Rate limiters for the work queue, after client-go's workqueue package:
// per-item exponential backoff, an overall token bucket (the API client's
// kube::TokenBucket), and the max of several. All take time from an injected ms::clock::Clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "controller/kube/rate_limiter.h"
#include "shared/clock/clock.h"

namespace ms::runtime {

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // How long `item` should wait before it is processed again; records a
  // failure for per-item limiters.
  virtual clock::Clock::Duration When(const std::string& item) = 0;
  // Stops tracking `item` (it succeeded).
  virtual void Forget(const std::string& item) = 0;
  // Failures recorded for `item` since the last Forget.
  virtual int NumRequeues(const std::string& item) = 0;
};

// base * 2^failures, capped at max_delay.
class ItemExponentialFailureRateLimiter final : public RateLimiter {
 public:
  ItemExponentialFailureRateLimiter(clock::Clock::Duration base, clock::Clock::Duration max_delay)
      : base_(base), max_(max_delay) {}

  clock::Clock::Duration When(const std::string& item) override {
    std::lock_guard<std::mutex> g(mu_);
    const int exp = failures_[item]++;
    // Compute in double to avoid overflow for large exponents.
    const double delay = static_cast<double>(base_.count()) * std::pow(2.0, exp);
    if (delay >= static_cast<double>(max_.count())) return max_;
    return clock::Clock::Duration(static_cast<clock::Clock::Duration::rep>(delay));
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
  clock::Clock::Duration base_, max_;
  std::mutex mu_;
  std::map<std::string, int> failures_;
};

// An overall token bucket: the delay is the time until the bucket's debt
// is paid (kube::TokenBucket's reservation).
class BucketRateLimiter final : public RateLimiter {
 public:
  BucketRateLimiter(const clock::Clock& clock, double qps, int burst) : bucket_(qps, burst, clock) {}

  clock::Clock::Duration When(const std::string&) override { return bucket_.Reserve(); }
  void Forget(const std::string&) override {}
  int NumRequeues(const std::string&) override { return 0; }

 private:
  kube::TokenBucketRateLimiter bucket_;
};

// The longest delay of its limiters; requeues are the highest count.
class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters) : limiters_(std::move(limiters)) {}

  clock::Clock::Duration When(const std::string& item) override {
    clock::Clock::Duration d = clock::Clock::Duration::zero();
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
inline std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(const clock::Clock& clock) {
  std::vector<std::unique_ptr<RateLimiter>> v;
  v.push_back(
      std::make_unique<ItemExponentialFailureRateLimiter>(std::chrono::milliseconds(5), std::chrono::seconds(1000)));
  v.push_back(std::make_unique<BucketRateLimiter>(clock, 10.0, 100));
  return std::make_unique<MaxOfRateLimiter>(std::move(v));
}

}  // namespace ms::runtime
