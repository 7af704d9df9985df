// The circuit breaker in front of Prometheus (design.md §3, issue 23 item 8):
// after `failures` consecutive failed queries the endpoint is not queried
// for a back-off period (open); then one query is let through (half-open,
// the probe): its success closes the breaker, its failure opens it again for
// twice the previous back-off, at most `max_open_for`.
//
// A failure is what says the endpoint cannot answer (QueryResult::unreachable:
// a transport error, a timeout, an HTTP 5xx); a query Prometheus answered
// (a value, no series, a PromQL error) is a success for the breaker.
// A success of any query (one started before the breaker opened included)
// closes it; failures reported while it is open are not counted.
//
// Pure state and time: the caller passes `now` and serializes the calls
// (the poller holds its mutex).
#pragma once

#include <chrono>
#include <string>

#include "shared/clock/clock.h"

namespace ms::autoscale {

struct BreakerOptions {
  int failures = 3;                                                // consecutive failures that open the breaker (>= 1)
  clock::Clock::Duration open_for = std::chrono::seconds(15);      // the first back-off
  clock::Clock::Duration max_open_for = std::chrono::seconds(60);  // the longest back-off
};

class CircuitBreaker {
 public:
  enum class State { kClosed, kOpen, kHalfOpen };

  explicit CircuitBreaker(BreakerOptions options = {});

  // May a query start at `now`? Closed: yes. Open: no, until the back-off has
  // passed; then the breaker is half-open and this call's query is the probe
  // (yes, once). Half-open with the probe in flight: no.
  bool Allow(clock::Clock::TimePoint now);
  void Success();
  void Failure(clock::Clock::TimePoint now, const std::string& error);

  State state() const { return state_; }
  // When an open breaker lets the probe through.
  clock::Clock::TimePoint open_until() const { return open_until_; }
  // Why queries are not made while open or half-open, for the log; empty
  // while closed.
  std::string Why() const;
  // While open or half-open: the error of the failure that opened it or
  // kept it open, what a query would say now, in the query's own words and
  // with nothing of the breaker's state (which changes while the world
  // does not: status messages say this, not Why()).
  const std::string& last_error() const { return last_error_; }

 private:
  BreakerOptions options_;
  State state_ = State::kClosed;
  int consecutive_ = 0;
  clock::Clock::Duration backoff_{};
  clock::Clock::TimePoint open_until_{};
  std::string last_error_;
};

}  // namespace ms::autoscale
