// The webhook's metrics, all declared here, with controller-runtime's names
// (controller_runtime_webhook_*) so that existing dashboards work, and the
// admission decisions. Built once per program from its registry.
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <string>
#include <string_view>

#include "shared/metrics/metrics.h"

namespace ms::webhook {

struct WebhookMetrics {
  explicit WebhookMetrics(metrics::Registry& registry);
  // The latency histogram's buckets: 50 µs doubling to about 1.6 s.
  static prometheus::Histogram::BucketBoundaries LatencyBuckets();

  prometheus::Family<prometheus::Counter>& requests;   // {webhook,code}
  prometheus::Family<prometheus::Histogram>& latency;  // {webhook}
  prometheus::Family<prometheus::Gauge>& in_flight;    // {webhook}
  prometheus::Family<prometheus::Counter>& decisions;  // {webhook,operation,decision}
};

// The series of one route (label webhook=`path`), resolved once so that a
// request builds no label map and searches no family. Every code the server
// answers with and every operation and decision are created at once, so
// that dashboards see zeros before traffic. Safe for concurrent use.
class RouteMetrics {
 public:
  RouteMetrics(WebhookMetrics& metrics, std::string path);

  prometheus::Gauge& in_flight;
  prometheus::Histogram& latency;
  prometheus::Counter& Requests(int code);
  // `operation` is an OperationLabel (CREATE, UPDATE, DELETE, CONNECT or
  // UNKNOWN), `decision` allowed, denied or rejected: a closed set, looked up
  // in a fixed table without building a string.
  prometheus::Counter& Decisions(std::string_view operation, std::string_view decision);

 private:
  WebhookMetrics& metrics_;
  std::string path_;
  std::map<int, prometheus::Counter*> requests_;  // by HTTP code
  // (operation, decision), 5 x 3: made at start for the pairs a route
  // answers with, on first use for the others.
  std::array<std::atomic<prometheus::Counter*>, 15> decisions_{};
};

}  // namespace ms::webhook
