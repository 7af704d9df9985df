#include "shared/process/signals.h"

#include <pthread.h>

namespace ms::process {

namespace {
sigset_t TerminationSet(bool with_wake) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  if (with_wake) sigaddset(&set, SIGUSR1);
  return set;
}
}  // namespace

void BlockTerminationSignals() {
  sigset_t set = TerminationSet(true);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

int WaitForTerminationFor(std::chrono::milliseconds timeout) {
  sigset_t set = TerminationSet(false);
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(timeout);
  const timespec ts{static_cast<time_t>(secs.count()), static_cast<long>((timeout - secs).count() * 1'000'000)};
  const int sig = sigtimedwait(&set, nullptr, &ts);
  return sig > 0 ? sig : 0;
}

int WaitForTermination() {
  sigset_t set = TerminationSet(false);
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  return sig;
}

SignalWatcher::SignalWatcher(std::function<void(int)> on_signal)
    : thread_([this, on_signal = std::move(on_signal)] {
        sigset_t set = TerminationSet(true);
        int sig = 0;
        while (sigwait(&set, &sig) == 0) {
          if (sig == SIGUSR1) {
            if (stopping_.load()) return;
            continue;  // not ours
          }
          on_signal(sig);
        }
      }) {}

SignalWatcher::~SignalWatcher() {
  stopping_.store(true);
  pthread_kill(thread_.native_handle(), SIGUSR1);
  thread_.join();
}

}  // namespace ms::process
