// A manually advanced clock for tests: Now() moves only when Advance() is
// called, and the threads waiting on it whose deadline that reaches are woken.
//
// A test synchronises with the threads under test through the clock's
// waiters (threads blocked in WaitUntil), never by sleeping:
//
//   clock.AwaitWaiters(1);                       // the worker is idle on the clock
//   clock.Advance(4s);                           // not yet due...
//   clock.AwaitWaiters(1);                       // ...and it went back to waiting
//   EXPECT_EQ(q.Len(), 0u);                      // a negative, proved in virtual time
//   ASSERT_TRUE(clock.AdvanceUntil([&] { return client.calls() == 3; }, 1s));
//
// Advance() takes every waiter it wakes off the list before it returns, so
// AwaitWaiters(n) after it returns only once they are back (or have left).
// A waiter woken by its own condition variable leaves the list when it
// returns. Eventually(pred) re-evaluates `pred` whenever a thread starts or
// stops waiting, time moves, or someone calls Notify() (a fake that changes
// state a test may wait for). Every wait has a generous real-time cap so
// that a broken test fails instead of hanging; the cap is never what a test
// measures.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <mutex>
#include <vector>

#include "shared/clock/clock.h"

namespace ms {

class FakeClock final : public clock::Clock {
 public:
  static constexpr std::chrono::milliseconds kCap{30'000};

  FakeClock() : now_(TimePoint{} + std::chrono::hours(1)), wall_(WallTime{} + std::chrono::hours(24 * 365 * 50)) {}
  FakeClock(const FakeClock&) = delete;
  FakeClock& operator=(const FakeClock&) = delete;

  TimePoint Now() const override {
    std::lock_guard<std::mutex> g(mu_);
    return now_;
  }
  WallTime WallNow() const override {
    std::lock_guard<std::mutex> g(mu_);
    return wall_;
  }

  // Returns once `cv` is notified (or spuriously) or virtual time reaches
  // `deadline`. May release and re-take `lock` before returning, as a
  // condition variable's wait does.
  void WaitUntil(std::condition_variable& cv, std::unique_lock<std::mutex>& lock, TimePoint deadline) const override {
    Waiter w{&cv, lock.mutex(), deadline};
    {
      std::lock_guard<std::mutex> g(mu_);
      if (now_ >= deadline) return;
      waiters_.push_back(&w);
      ++waits_;
      Changed();
    }
    // Advance() notifies `cv` holding the caller's mutex, so its wake-up
    // cannot fall between the registration above and this wait.
    cv.wait(lock);
    std::unique_lock<std::mutex> g(mu_);
    if (!w.woken) waiters_.remove(&w);
    Changed();
    if (w.pins > 0) {
      // An Advance() is about to notify `cv` and needs the caller's mutex:
      // let it finish before `w` and perhaps `cv` go away.
      lock.unlock();
      activity_.wait(g, [&w] { return w.pins == 0; });
      g.unlock();
      lock.lock();
    }
  }

  // Moves time on and wakes the waiters whose deadline it reaches.
  void Advance(Duration d) {
    std::vector<Waiter*> due;
    {
      std::lock_guard<std::mutex> g(mu_);
      now_ += d;
      wall_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(d);
      for (auto it = waiters_.begin(); it != waiters_.end();) {
        if ((*it)->deadline > now_) {
          ++it;
          continue;
        }
        (*it)->woken = true;
        (*it)->pins++;
        due.push_back(*it);
        it = waiters_.erase(it);
      }
      Changed();
    }
    for (Waiter* w : due) {
      {
        std::lock_guard<std::mutex> caller(*w->mutex);
        w->cv->notify_all();
      }
      std::lock_guard<std::mutex> g(mu_);
      w->pins--;
      Changed();
    }
  }

  void SetWall(WallTime t) {
    std::lock_guard<std::mutex> g(mu_);
    wall_ = t;
    Changed();
  }

  // Threads blocked in WaitUntil now (not counting those Advance() woke).
  size_t waiters() const {
    std::lock_guard<std::mutex> g(mu_);
    return waiters_.size();
  }
  // How many times WaitUntil has waited.
  uint64_t waits() const {
    std::lock_guard<std::mutex> g(mu_);
    return waits_;
  }

  // Blocks until at least `n` threads wait on the clock; false after `cap`.
  bool AwaitWaiters(size_t n, std::chrono::milliseconds cap = kCap) const {
    std::unique_lock<std::mutex> g(mu_);
    return activity_.wait_for(g, cap, [&] { return waiters_.size() >= n; });
  }

  // Blocks until WaitUntil has waited `n` times in all (a thread that was
  // told of a change and has gone back to waiting); false after `cap`.
  bool AwaitWaits(uint64_t n, std::chrono::milliseconds cap = kCap) const {
    std::unique_lock<std::mutex> g(mu_);
    return activity_.wait_for(g, cap, [&] { return waits_ >= n; });
  }

  // Wakes Eventually() to look again (for fakes whose state a test waits for).
  void Notify() const {
    std::lock_guard<std::mutex> g(mu_);
    Changed();
  }

  // Blocks until `pred` holds, evaluated now and after each change (see the
  // header); false if `cap` passes first. `pred` runs without the clock's
  // lock, so it may read the clock.
  template <typename Pred>
  bool Eventually(Pred pred, std::chrono::milliseconds cap = kCap) const {
    const auto end = std::chrono::steady_clock::now() + cap;
    std::unique_lock<std::mutex> g(mu_);
    for (;;) {
      const uint64_t seen = changes_;
      g.unlock();
      if (pred()) return true;
      g.lock();
      if (!activity_.wait_until(g, end, [&] { return changes_ != seen; })) {
        g.unlock();
        return pred();
      }
    }
  }

  // Virtual time passes in `step`s until `pred` holds: before each step,
  // waits until `pred` holds or `waiters` threads wait on the clock (the
  // threads under test have done what they can at this time). False when
  // `pred` still fails after `limit` of virtual time, or a step's real-time
  // cap passes.
  template <typename Pred>
  bool AdvanceUntil(Pred pred, Duration step, size_t waiters = 1, Duration limit = std::chrono::hours(1)) {
    for (Duration advanced{}; advanced <= limit; advanced += step) {
      if (!Eventually([&] { return pred() || this->waiters() >= waiters; })) return pred();
      if (pred()) return true;
      Advance(step);
    }
    return pred();
  }

 private:
  struct Waiter {
    std::condition_variable* cv;
    std::mutex* mutex;
    TimePoint deadline;
    bool woken = false;  // taken off the list by Advance()
    int pins = 0;        // Advance() calls about to notify it
  };

  // Called with mu_ held.
  void Changed() const {
    ++changes_;
    activity_.notify_all();
  }

  mutable std::mutex mu_;
  mutable std::condition_variable activity_;
  TimePoint now_;
  WallTime wall_;
  mutable std::list<Waiter*> waiters_;
  mutable uint64_t waits_ = 0;
  mutable uint64_t changes_ = 0;
};

}  // namespace ms
