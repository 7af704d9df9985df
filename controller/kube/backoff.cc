#include "controller/kube/backoff.h"

#include <algorithm>

namespace ms::kube {

Backoff::Backoff(clock::Clock::Duration initial, clock::Clock::Duration max, double jitter, uint64_t seed)
    : initial_(initial), max_(std::max(initial, max)), base_(initial), jitter_(std::max(0.0, jitter)), rng_(seed) {}

clock::Clock::Duration Backoff::Next() {
  const clock::Clock::Duration base = base_;
  base_ = std::min(max_, base_ * 2);
  if (jitter_ <= 0) return base;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double factor = 1.0 + jitter_ * u(rng_);
  return std::chrono::duration_cast<clock::Clock::Duration>(base * factor);
}

}  // namespace ms::kube
