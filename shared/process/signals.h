// Waiting for SIGTERM/SIGINT with sigwait (no async-signal-unsafe handlers).
// Block the signals in main before any thread starts, then either call
// WaitForTermination() on the main thread or keep a SignalWatcher that
// calls back from a thread of its own.
#pragma once

#include <atomic>
#include <chrono>
#include <csignal>
#include <functional>
#include <thread>

namespace ms::process {

// Blocks SIGTERM, SIGINT and SIGUSR1 (SignalWatcher's internal wake-up) in
// the calling thread, which threads created afterwards inherit, and ignores
// SIGPIPE. Call first thing in main.
void BlockTerminationSignals();
// Blocks until SIGTERM or SIGINT arrives; returns the signal number.
int WaitForTermination();
// The same for at most `timeout`: 0 when none arrived.
int WaitForTerminationFor(std::chrono::milliseconds timeout);

// Calls on_signal(signal number) on its own thread for each SIGTERM or
// SIGINT until destroyed. Needs BlockTerminationSignals() first.
class SignalWatcher {
 public:
  explicit SignalWatcher(std::function<void(int)> on_signal);
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace ms::process
