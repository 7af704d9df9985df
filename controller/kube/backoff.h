// Jittered exponential backoff: initial, doubling up to max; Reset() after
// success. Not thread-safe (one per retry loop).
#pragma once

#include <cstdint>
#include <random>

#include "shared/clock/clock.h"

namespace ms::kube {

class Backoff {
 public:
  // Each delay is base * (1 + jitter * U[0,1)), base = min(max, initial * 2^n).
  Backoff(clock::Clock::Duration initial, clock::Clock::Duration max, double jitter = 0.2,
          uint64_t seed = std::random_device{}());

  clock::Clock::Duration Next();
  void Reset() { base_ = initial_; }
  clock::Clock::Duration current_base() const { return base_; }

 private:
  clock::Clock::Duration initial_, max_, base_;
  double jitter_;
  std::mt19937_64 rng_;
};

}  // namespace ms::kube
