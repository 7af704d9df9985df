// A token bucket like client-go's (golang.org/x/time/rate): the bucket holds
// up to `burst` tokens and refills at `qps` per second; each request takes one
// token, waiting (in the injected Clock's time) when the bucket is empty.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "base/clock.h"

namespace ms::kube {

class TokenBucketRateLimiter {
 public:
  // qps <= 0: unlimited. The bucket starts full.
  TokenBucketRateLimiter(double qps, int burst, const Clock& clock);

  // Takes a token now if one is available.
  bool TryAccept();
  // Takes a token (possibly borrowing one from the future) and returns how
  // long the caller must wait before using it.
  Clock::Duration Reserve();
  // Reserve() and wait. Returns false if `stop` became true first.
  bool Wait(const std::atomic<bool>* stop = nullptr);
  // Takes a token and waits for it only if it is available by `deadline`;
  // otherwise takes nothing and returns false at once.
  bool WaitBefore(Clock::TimePoint deadline);
  // Tokens available now (may be negative while reservations are pending).
  double Tokens();

 private:
  void AdvanceLocked(Clock::TimePoint now);

  const double qps_;
  const double burst_;
  const Clock& clock_;
  std::mutex mu_;
  std::condition_variable cv_;  // only for Clock::WaitUntil; nothing notifies
  double tokens_;
  Clock::TimePoint last_;
};

}  // namespace ms::kube
