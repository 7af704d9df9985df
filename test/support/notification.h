// A one-shot event between threads of a test: one side Notify()s, the other
// waits for it (with a generous real-time cap so a broken test fails instead
// of hanging; the cap is never the thing a test measures).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace ms::test {

class Notification {
 public:
  void Notify() {
    std::lock_guard<std::mutex> g(mu_);
    notified_ = true;
    cv_.notify_all();
  }
  // True once notified; false if `cap` passed first.
  bool Wait(std::chrono::milliseconds cap = std::chrono::seconds(30)) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, cap, [this] { return notified_; });
  }
  bool notified() const {
    std::lock_guard<std::mutex> g(mu_);
    return notified_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool notified_ = false;
};

}  // namespace ms::test
