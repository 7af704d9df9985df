#include "controller/autoscale/breaker.h"

#include <algorithm>

namespace ms::autoscale {

CircuitBreaker::CircuitBreaker(BreakerOptions options) : options_(options) {
  options_.failures = std::max(1, options_.failures);
  options_.open_for = std::max(options_.open_for, clock::Clock::Duration(std::chrono::milliseconds(1)));
  options_.max_open_for = std::max(options_.max_open_for, options_.open_for);
}

bool CircuitBreaker::Allow(clock::Clock::TimePoint now) {
  switch (state_) {
    case State::kClosed:
      return true;
    case State::kOpen:
      if (now < open_until_) return false;
      state_ = State::kHalfOpen;  // this call is the probe
      return true;
    case State::kHalfOpen:
      return false;
  }
  return false;
}

void CircuitBreaker::Success() {
  state_ = State::kClosed;
  consecutive_ = 0;
  backoff_ = clock::Clock::Duration::zero();
  last_error_.clear();
}

void CircuitBreaker::Failure(clock::Clock::TimePoint now, const std::string& error) {
  switch (state_) {
    case State::kOpen:
      return;  // a query started before it opened
    case State::kHalfOpen:
      backoff_ = std::min(backoff_ * 2, options_.max_open_for);  // the probe failed
      break;
    case State::kClosed:
      last_error_ = error;
      if (++consecutive_ < options_.failures) return;
      backoff_ = options_.open_for;
      break;
  }
  last_error_ = error;
  state_ = State::kOpen;
  open_until_ = now + backoff_;
}

std::string CircuitBreaker::Why() const {
  if (state_ == State::kClosed) return {};
  return "Prometheus is not queried after " + std::to_string(options_.failures) +
         " consecutive failures (circuit breaker open, probing again after a back-off); the last: " + last_error_;
}

}  // namespace ms::autoscale
