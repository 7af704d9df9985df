#include "webhook/metrics.h"

#include <tuple>

namespace ms::webhook {

namespace {

constexpr std::array<std::string_view, 5> kOperations = {"CREATE", "UPDATE", "DELETE", "CONNECT", "UNKNOWN"};
constexpr std::array<std::string_view, 3> kDecisions = {"allowed", "denied", "rejected"};

// The slot of (operation, decision); anything outside the closed sets counts
// as UNKNOWN / rejected (callers pass OperationLabel values).
size_t DecisionSlot(std::string_view operation, std::string_view decision) {
  size_t op = kOperations.size() - 1, d = kDecisions.size() - 1;
  for (size_t i = 0; i < kOperations.size(); ++i)
    if (operation == kOperations[i]) op = i;
  for (size_t i = 0; i < kDecisions.size(); ++i)
    if (decision == kDecisions[i]) d = i;
  return op * kDecisions.size() + d;
}

}  // namespace

WebhookMetrics::WebhookMetrics(metrics::Registry& registry)
    : requests(prometheus::BuildCounter()
                   .Name("controller_runtime_webhook_requests_total")
                   .Help("Total number of admission requests by HTTP status code.")
                   .Register(registry.families())),
      latency(prometheus::BuildHistogram()
                  .Name("controller_runtime_webhook_latency_seconds")
                  .Help("Histogram of the latency of processing admission requests")
                  .Register(registry.families())),
      in_flight(prometheus::BuildGauge()
                    .Name("controller_runtime_webhook_requests_in_flight")
                    .Help("Current number of admission requests being served.")
                    .Register(registry.families())),
      decisions(prometheus::BuildCounter()
                    .Name("modelservice_admission_decisions_total")
                    .Help("Admission decisions by webhook, operation and decision (allowed, denied, rejected).")
                    .Register(registry.families())) {}

prometheus::Histogram::BucketBoundaries WebhookMetrics::LatencyBuckets() {
  // 50 us .. 1.6 s doubling (a review takes tens of microseconds), then 2.5,
  // 5 and 10 s: the API server gives up at the configurations'
  // timeoutSeconds (5), and the latency alert's critical rule is at 4 s.
  auto buckets = metrics::ExponentialBuckets(0.00005, 2, 16);
  buckets.insert(buckets.end(), {2.5, 5, 10});
  return buckets;
}

RouteMetrics::RouteMetrics(WebhookMetrics& metrics, std::string path)
    : in_flight(metrics.in_flight.Add({{"webhook", path}})),
      latency(metrics.latency.Add({{"webhook", path}}, WebhookMetrics::LatencyBuckets())),
      metrics_(metrics),
      path_(std::move(path)) {
  // Every code ServeReview and the HTTP layer's refusals answer with.
  for (int code : {200, 400, 408, 411, 413, 415})
    requests_[code] = &metrics_.requests.Add({{"webhook", path_}, {"code", std::to_string(code)}});
  static_assert(kOperations.size() * kDecisions.size() == std::tuple_size_v<decltype(decisions_)>);
  // A review's answers (every known operation, allowed or denied) and the
  // refusal of what is not a review (UNKNOWN, rejected); the others on use.
  for (size_t op = 0; op + 1 < kOperations.size(); ++op)
    for (size_t d = 0; d < 2; ++d) Decisions(kOperations[op], kDecisions[d]);
  Decisions("UNKNOWN", "rejected");
}

prometheus::Counter& RouteMetrics::Requests(int code) {
  auto it = requests_.find(code);
  if (it != requests_.end()) return *it->second;
  return metrics_.requests.Add({{"webhook", path_}, {"code", std::to_string(code)}});  // rare: thread-safe slow path
}

prometheus::Counter& RouteMetrics::Decisions(std::string_view operation, std::string_view decision) {
  const size_t slot = DecisionSlot(operation, decision);
  if (prometheus::Counter* c = decisions_[slot].load(std::memory_order_acquire)) return *c;
  // Rare: Family::Add is thread-safe and gives every caller the same series.
  prometheus::Counter& c = metrics_.decisions.Add({{"webhook", path_},
                                                   {"operation", std::string(kOperations[slot / kDecisions.size()])},
                                                   {"decision", std::string(kDecisions[slot % kDecisions.size()])}});
  decisions_[slot].store(&c, std::memory_order_release);
  return c;
}

}  // namespace ms::webhook
