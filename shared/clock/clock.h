// Injected time, in the spirit of Envoy's TimeSource: code that waits, backs
// off, expires leases or keeps windows takes a Clock& so tests can drive it in
// virtual time instead of sleeping.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace ms::clock {

class Clock {
 public:
  using Duration = std::chrono::steady_clock::duration;
  using TimePoint = std::chrono::steady_clock::time_point;
  using WallTime = std::chrono::system_clock::time_point;

  virtual ~Clock() = default;
  // Monotonic time, for durations, deadlines and backoff.
  virtual TimePoint Now() const = 0;
  // Wall-clock time, for timestamps written to the API (lease renewTime,
  // condition lastTransitionTime).
  virtual WallTime WallNow() const = 0;
  // Blocks until `deadline` or until `cv` is notified (spurious wake-ups
  // allowed, like condition_variable::wait_until). The caller holds `lock`.
  virtual void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimePoint deadline) const = 0;
};

// The real clock.
class SystemClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  WallTime WallNow() const override { return std::chrono::system_clock::now(); }
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimePoint deadline) const override {
    cv.wait_until(lock, deadline);
  }
};

}  // namespace ms::clock
