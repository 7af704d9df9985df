// Waiting for SIGTERM/SIGINT on a dedicated thread with sigwait (no
// async-signal-unsafe handlers). Block the signals in main before any thread
// starts, then call WaitForTermination().
#pragma once

#include <csignal>

namespace ms {

// Blocks SIGTERM, SIGINT and SIGPIPE in the calling thread (threads created
// afterwards inherit the mask). Call first thing in main.
void BlockTerminationSignals();
// Blocks until SIGTERM or SIGINT arrives; returns the signal number.
int WaitForTermination();

}  // namespace ms
