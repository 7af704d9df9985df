// The Kubernetes API client over libcurl, as client-go's rest client: the
// Transport (transport.h: libcurl, connections, TLS), the RequestPolicy
// (policy.h: a token bucket per API group-version, deadlines, the write
// gate) and watches (a stream decoded into events). Safe for concurrent use
// by several threads. What it adds itself: a 401 is retried once with the
// bearer token re-read from its file; a 429 or 5xx with Retry-After is sent
// again after that wait (policy.h: at most kMaxRetries times, each wait at
// most kMaxRetryAfter, never past the call's deadline; the last answer is
// the Result otherwise); answers become Results (the body
// decoded, a metav1.Status for an error); every request is counted in
// rest_client_requests_total{code,method,host} (ClientMetrics, shared by the
// program's clients). libcurl's callbacks run behind an exception barrier:
// what a watch event handler throws ends that watch with an error.
//
// A request the policy refuses is not sent; its Result has code 0 and the
// reason (kReasonNotLeader, kReasonClosed, kReasonDeadline); one it cuts
// short in flight says "aborted in flight".
#pragma once

#include <spdlog/logger.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "controller/kube/client.h"
#include "controller/kube/config.h"
#include "controller/kube/metrics.h"
#include "controller/kube/policy.h"
#include "controller/kube/token_source.h"
#include "controller/kube/transport.h"
#include "controller/kube/write_gate.h"
#include "shared/clock/clock.h"

namespace ms::kube {

struct HttpClientOptions {
  std::chrono::milliseconds request_timeout{30'000};  // whole request, non-watch calls
  TransportOptions transport;
  // Asked before every write; null: writes are not gated. Must outlive the client.
  const WriteGate* write_gate = nullptr;
};

class HttpClient final : public Client {
 public:
  HttpClient(RestConfig config, const clock::Clock& clock, ClientMetrics& metrics,
             std::shared_ptr<spdlog::logger> logger = nullptr, HttpClientOptions options = {});
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  Result Do(const Call& call) override;
  Result Watch(const std::string& path, const WatchHandler& on_event, std::stop_token stop) override;
  Result WatchKeeping(const std::string& path, const KeptAnnotations* annotations, const WatchHandler& on_event,
                      std::stop_token stop) override;

  // Refuses every request from now on (reads too; reason kReasonClosed),
  // aborts those in flight within about a second (libcurl calls the progress
  // callback at least that often), wakes those waiting for a token and ends
  // watches at once. For the exit path once the Lease is lost. Thread-safe.
  void Close();

  // host:port of the server, as in the metric's `host` label.
  const std::string& host() const { return transport_.host(); }

 private:
  // One try of `call`; `body` is its serialized body (or null).
  Answer Send(const Call& call, const std::string* body);
  // The Result of an answer the server gave.
  Result Decode(const Call& call, Answer answer);
  // Every label value comes from a closed set (see Count in http_client.cc).
  void Count(long http, const char* method);

  const std::string token_file_;
  std::shared_ptr<spdlog::logger> logger_;
  TokenSource tokens_;
  Transport transport_;
  RequestPolicy policy_;
  prometheus::Family<prometheus::Counter>& requests_;
};

// The Content-Type for a patch type.
const char* PatchContentType(PatchType type);

}  // namespace ms::kube
