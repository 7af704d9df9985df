// The registry for metrics a test does not read: every component always
// reports its metrics (no null metric pointers), and a test that checks none
// of them gives it the metrics built on this one registry of the test
// program. A test that reads metrics makes its own registry.
#pragma once

#include "shared/metrics/metrics.h"

namespace ms::test {

inline metrics::Registry& UnreadRegistry() {
  static metrics::Registry registry;
  return registry;
}

// One `Metrics` (a subsystem's metrics struct) on UnreadRegistry().
template <typename Metrics>
Metrics& Unread() {
  static Metrics metrics(UnreadRegistry());
  return metrics;
}

}  // namespace ms::test
