// What decides, at the moment a write request is about to leave the process,
// whether it may. The leader elector is one (controller/runtime/
// leader_election.h): writes may be sent only while the Lease is valid by the
// monotonic clock. The HTTP client asks the gate right before it sends each
// POST/PUT/PATCH/DELETE, bounds the request's timeout by the time left, and
// aborts a write in flight once the time is up (design.md §3).
#pragma once

#include "shared/clock/clock.h"

namespace ms::kube {

class WriteGate {
 public:
  virtual ~WriteGate() = default;
  // How long writes may still be sent, measured now on the gate's clock;
  // zero or negative: none may leave the process.
  virtual clock::Clock::Duration WriteTimeLeft() const = 0;
};

}  // namespace ms::kube
