// A manually advanced clock for tests: Now() moves only when Advance() is
// called, and waiters whose deadline has passed are woken.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>

#include "base/clock.h"

namespace ms {

class FakeClock final : public Clock {
 public:
  FakeClock() : now_(TimePoint{} + std::chrono::hours(1)), wall_(WallTime{} + std::chrono::hours(24 * 365 * 50)) {}

  TimePoint Now() const override {
    std::lock_guard<std::mutex> g(mu_);
    return now_;
  }
  WallTime WallNow() const override {
    std::lock_guard<std::mutex> g(mu_);
    return wall_;
  }
  // Waits in real time for a notification, but returns as soon as virtual time
  // reaches `deadline` (checked on every Advance()).
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimePoint deadline) const override {
    if (Now() >= deadline) return;
    {
      std::lock_guard<std::mutex> g(mu_);
      waiters_.insert(&cv);
      ++waits_;
    }
    // Bounded real wait so that an Advance() racing with this call is seen.
    cv.wait_for(lock, std::chrono::milliseconds(2));
    std::lock_guard<std::mutex> g(mu_);
    waiters_.erase(&cv);
  }

  void Advance(Duration d) {
    // Notified under mu_: a waiter unregisters under mu_ before its
    // condition variable can go away.
    std::lock_guard<std::mutex> g(mu_);
    now_ += d;
    wall_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
    for (auto* cv : waiters_) cv->notify_all();
  }

  // How many times WaitUntil has waited: a test that knows which thread
  // waits on this clock can tell that it has reached its wait.
  uint64_t waits() const {
    std::lock_guard<std::mutex> g(mu_);
    return waits_;
  }

  void SetWall(WallTime t) {
    std::lock_guard<std::mutex> g(mu_);
    wall_ = t;
  }

 private:
  mutable std::mutex mu_;
  TimePoint now_;
  WallTime wall_;
  mutable std::set<std::condition_variable*> waiters_;
  mutable uint64_t waits_ = 0;
};

}  // namespace ms
