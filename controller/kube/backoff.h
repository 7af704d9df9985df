// Jittered exponential backoff: initial, doubling up to max; Reset() after
// success. Not thread-safe (one per retry loop).
#pragma once

#include <cstdint>
#include <random>

#include "shared/base/clock.h"

namespace ms::kube {

class Backoff {
 public:
  // Each delay is base * (1 + jitter * U[0,1)), base = min(max, initial * 2^n).
  Backoff(Clock::Duration initial, Clock::Duration max, double jitter = 0.2, uint64_t seed = std::random_device{}());

  Clock::Duration Next();
  void Reset() { base_ = initial_; }
  Clock::Duration current_base() const { return base_; }

 private:
  Clock::Duration initial_, max_, base_;
  double jitter_;
  std::mt19937_64 rng_;
};

}  // namespace ms::kube
