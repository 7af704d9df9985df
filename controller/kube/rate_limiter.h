// The one token bucket of the controller, with the semantics of
// golang.org/x/time/rate as client-go uses it: the bucket holds up to `burst`
// tokens and refills at `qps` per second; a reservation always succeeds and
// may borrow from the future, the delay being the time until the debt is
// paid. Used by the API client (one bucket per API group-version), the work
// queue's overall limiter and the Event spam filter (one per object).
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <stop_token>

#include "shared/clock/clock.h"

namespace ms::kube {

// A bucket as a plain value (32 bytes, not thread-safe): the caller passes
// the time and holds any lock.
class TokenBucket {
 public:
  // qps <= 0: unlimited. The bucket starts full.
  TokenBucket(double qps, int burst, clock::Clock::TimePoint now);

  // Takes a token now if one is available.
  bool TryAccept(clock::Clock::TimePoint now);
  // Takes a token (possibly borrowing one from the future) and returns how
  // long the caller must wait before using it.
  clock::Clock::Duration Reserve(clock::Clock::TimePoint now);
  // Tokens available at `now` (negative while reservations are pending).
  double Tokens(clock::Clock::TimePoint now);
  bool unlimited() const { return qps_ <= 0; }
  double qps() const { return qps_; }

 private:
  void Advance(clock::Clock::TimePoint now);

  double qps_;
  double burst_;
  double tokens_;
  clock::Clock::TimePoint last_;
};

// A thread-safe TokenBucket that can wait, in the injected Clock's time.
class TokenBucketRateLimiter {
 public:
  TokenBucketRateLimiter(double qps, int burst, const clock::Clock& clock);

  bool TryAccept();
  clock::Clock::Duration Reserve();
  // Takes a token (possibly borrowing from the future) and waits until it
  // may be used. With a `deadline`, takes nothing and returns false at once
  // when that would be after it. Returns false when `stop` is requested
  // while it waits (the token is spent).
  bool Acquire(std::optional<clock::Clock::TimePoint> deadline = std::nullopt, std::stop_token stop = {});
  double Tokens();

 private:
  const clock::Clock& clock_;
  std::mutex mu_;
  std::condition_variable cv_;  // for Clock::WaitUntil; a stop request notifies it
  TokenBucket bucket_;
};

}  // namespace ms::kube
