// A gate between threads of a test: a thread that Pass()es a closed gate
// blocks until the test opens it, and the test can wait until a given number
// of threads are held there (so it knows where they are without sleeping).
// Waits have a generous real-time cap so that a broken test fails instead of
// hanging; the cap is never what a test measures.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace ms::test {

class Gate {
 public:
  static constexpr std::chrono::milliseconds kCap{30'000};

  explicit Gate(bool open = true) : open_(open) {}

  void Close() {
    std::lock_guard<std::mutex> g(mu_);
    open_ = false;
  }
  void Open() {
    std::lock_guard<std::mutex> g(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // Blocks while the gate is closed (at most `cap`); false when the cap passed.
  bool Pass(std::chrono::milliseconds cap = kCap) {
    std::unique_lock<std::mutex> lock(mu_);
    ++held_;
    cv_.notify_all();
    const bool passed = cv_.wait_for(lock, cap, [this] { return open_; });
    --held_;
    ++passed_;
    cv_.notify_all();
    return passed;
  }
  // Blocks until `n` threads are held at the gate; false after `cap`.
  bool AwaitHeld(size_t n, std::chrono::milliseconds cap = kCap) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, cap, [&] { return held_ >= n; });
  }
  // Blocks until `n` threads have passed in all; false after `cap`.
  bool AwaitPassed(size_t n, std::chrono::milliseconds cap = kCap) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, cap, [&] { return passed_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_;
  size_t held_ = 0;
  size_t passed_ = 0;
};

}  // namespace ms::test
