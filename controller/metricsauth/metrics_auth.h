// Who may read the controller's /metrics with --metrics-secure (design.md
// §4), as controller-runtime's WithAuthenticationAndAuthorization filter and
// kube-rbac-proxy decide it: the caller's `Authorization: Bearer <token>`
// is authenticated by a TokenReview, then its user is authorized by a
// SubjectAccessReview for `get` on the non-resource URL /metrics. 401
// (without a token, or one the API server does not authenticate), 403 (not
// allowed), 200.
//
// It runs on the metrics server's loop, so every answer is quick or bounded:
//  - answers are cached, keyed by the token's SHA-256 (the token itself is
//    never kept): allowed for `allowed_ttl`, refused for `denied_ttl`, at
//    most `max_entries` (the oldest entry gives way);
//  - a review (both calls) has `review_timeout` at most, else 503;
//  - reviews of tokens not in the cache are budgeted: at most `max_in_flight`
//    at once (beyond: 503 at once, nothing queued) and a token bucket of
//    `reviews_per_second` (beyond: 429), so that a client sending many
//    distinct tokens costs the API server a bounded rate of calls and the
//    controller a bounded memory.
// Errors of the API server (no RBAC for the reviews, timeouts) are 503 and
// are not cached; the client is not told their details (the log is). Thread-safe.
#pragma once

#include <spdlog/logger.h>

#include <chrono>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "controller/kube/client.h"
#include "controller/kube/rate_limiter.h"
#include "shared/clock/clock.h"
#include "shared/transport/side_endpoints.h"

namespace ms::metricsauth {

struct MetricsAuthOptions {
  size_t max_entries = 1024;
  clock::Clock::Duration allowed_ttl = std::chrono::minutes(1);
  clock::Clock::Duration denied_ttl = std::chrono::seconds(10);
  clock::Clock::Duration review_timeout = std::chrono::seconds(2);
  int max_in_flight = 2;
  double reviews_per_second = 10;
  int review_burst = 20;
};

// The non-resource URL and verb a caller must be allowed.
inline constexpr const char* kMetricsPath = "/metrics";
inline constexpr const char* kMetricsVerb = "get";

// The API paths of the two reviews.
inline constexpr const char* kTokenReviewsPath = "/apis/authentication.k8s.io/v1/tokenreviews";
inline constexpr const char* kSubjectAccessReviewsPath = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

class MetricsAuthorizer {
 public:
  // `client` (its own, without a write gate: a review is a POST, which a
  // standby must be able to send too) and `clock` must outlive it.
  MetricsAuthorizer(kube::Client& client, const clock::Clock& clock, MetricsAuthOptions options = {},
                    std::shared_ptr<spdlog::logger> logger = nullptr);
  MetricsAuthorizer(const MetricsAuthorizer&) = delete;
  MetricsAuthorizer& operator=(const MetricsAuthorizer&) = delete;

  // The decision for a scrape, from its Authorization header.
  transport::GateDecision Check(const transport::Request& request);
  // The decision for a bearer token (empty: 401).
  transport::GateDecision CheckToken(const std::string& token);
  // Check() as the metrics server's gate; this must outlive the server.
  transport::MetricsGate Gate() {
    return [this](const transport::Request& r) { return Check(r); };
  }
  // Answers in the cache (expired ones included until they are replaced).
  size_t cached() const;

 private:
  struct Entry {
    transport::GateDecision decision;
    clock::Clock::TimePoint expires;
    std::list<std::string>::iterator order;
  };
  std::optional<transport::GateDecision> Lookup(const std::string& key);
  void Remember(const std::string& key, const transport::GateDecision& decision);
  // Takes a review slot, or says why not (429, 503).
  std::optional<transport::GateDecision> Admit();
  void Release();
  // The TokenReview, then the SubjectAccessReview; `cacheable` false for
  // failures of the API server.
  transport::GateDecision Review(const std::string& token, bool* cacheable);

  kube::Client& client_;
  const clock::Clock& clock_;
  const MetricsAuthOptions options_;
  std::shared_ptr<spdlog::logger> logger_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> cache_;  // by SHA-256 of the token
  std::list<std::string> order_;                  // cache keys, oldest first
  kube::TokenBucket bucket_;
  int in_flight_ = 0;
};

// The SHA-256 of `token`, 32 raw bytes.
std::string TokenDigest(const std::string& token);

// The token of an `Authorization: Bearer <token>` value; empty when it is
// not one.
std::string BearerToken(const std::string* authorization);

}  // namespace ms::metricsauth
