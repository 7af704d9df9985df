// SignalWatcher with real signals sent to this process.
#include "shared/process/signals.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace ms::process {
namespace {

TEST(SignalWatcher, CallsBackForEachTerminationSignalAndStopsWhenDestroyed) {
  BlockTerminationSignals();
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int> seen;
  {
    SignalWatcher watcher([&](int sig) {
      std::lock_guard lock(mu);
      seen.push_back(sig);
      cv.notify_all();
    });
    auto wait_for = [&](size_t n) {
      std::unique_lock lock(mu);
      return cv.wait_for(lock, std::chrono::seconds(5), [&] { return seen.size() >= n; });
    };
    ASSERT_EQ(kill(getpid(), SIGTERM), 0);
    ASSERT_TRUE(wait_for(1));
    ASSERT_EQ(kill(getpid(), SIGINT), 0);
    ASSERT_TRUE(wait_for(2));
    // A stray SIGUSR1 (the internal wake-up) does not stop the watcher.
    ASSERT_EQ(kill(getpid(), SIGUSR1), 0);
    ASSERT_EQ(kill(getpid(), SIGTERM), 0);
    ASSERT_TRUE(wait_for(3));
  }  // the destructor returns: the thread was woken and joined
  EXPECT_EQ(seen, (std::vector<int>{SIGTERM, SIGINT, SIGTERM}));
}

}  // namespace
}  // namespace ms::process
