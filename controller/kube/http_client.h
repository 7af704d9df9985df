// The Kubernetes API client over libcurl. Safe for concurrent use by several
// threads: easy handles are pooled (each keeps its keep-alive connections).
// Requests other than Watch pass a client-side token bucket (RestConfig
// qps/burst, in the injected Clock's time): one bucket per API group-version,
// as client-go has one REST client per group-version; qps <= 0 means no
// client-side limit. libcurl's callbacks run behind an exception barrier:
// what a watch event handler throws ends that watch with an error. Counts
// every request in rest_client_requests_total{code,method,host}
// (ClientMetrics, shared by the program's clients).
//
// Writes (POST, PUT, PATCH, DELETE) pass the options' WriteGate when one is
// set: the gate is asked right before the request is sent (libcurl's
// pre-request callback, after the connection is ready), the request's timeout
// is at most the gate's time left, and a write in flight is aborted once the
// gate closes. A write the gate refuses is not sent; its Result has code 0 and
// reason kReasonNotLeader.
#pragma once

#include <spdlog/logger.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/metrics.h"
#include "controller/kube/client.h"
#include "controller/kube/config.h"
#include "controller/kube/metrics.h"
#include "controller/kube/write_gate.h"

namespace ms::kube {

struct HttpClientOptions {
  std::chrono::milliseconds request_timeout{30'000};  // whole request, non-watch calls
  std::chrono::milliseconds connect_timeout{10'000};
  // A watch receiving less than 1 byte/s for this long is dropped (the API
  // server sends a bookmark about once a minute).
  std::chrono::seconds watch_low_speed_time{90};
  // How often a watch checks its stop flag while idle.
  std::chrono::milliseconds watch_poll_interval{100};
  size_t max_response_bytes = 256u << 20;
  size_t max_idle_handles = 32;
  // Asked before every write; null: writes are not gated. Must outlive the client.
  const WriteGate* write_gate = nullptr;
};

// Result reasons (code 0) of requests this client did not send or cut short.
inline constexpr const char* kReasonNotLeader = "NotLeader";        // the WriteGate refused
inline constexpr const char* kReasonClosed = "ClientClosed";        // after Close()
inline constexpr const char* kReasonDeadline = "DeadlineExceeded";  // a *Before call's deadline

class HttpClient final : public Client {
 public:
  HttpClient(RestConfig config, const Clock& clock, ClientMetrics& metrics,
             std::shared_ptr<spdlog::logger> logger = nullptr, HttpClientOptions options = {});
  ~HttpClient() override;
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  Result Get(const std::string& path) override;
  Result List(const std::string& path) override;
  Result Create(const std::string& path, const nlohmann::json& body) override;
  Result Update(const std::string& path, const nlohmann::json& body) override;
  Result Patch(const std::string& path, PatchType type, const nlohmann::json& patch) override;
  Result Delete(const std::string& path) override;
  Result Watch(const std::string& path, const std::function<bool(const WatchEvent&)>& on_event,
               const std::atomic<bool>& stop) override;

  // Requests bounded by `deadline` (on the client's Clock) instead of
  // options.request_timeout: not sent when the deadline has passed or the
  // rate limiter would make them wait past it, aborted when it comes. The
  // leader elector bounds each Lease attempt this way.
  Result GetBefore(const std::string& path, Clock::TimePoint deadline);
  Result CreateBefore(const std::string& path, const nlohmann::json& body, Clock::TimePoint deadline);
  Result UpdateBefore(const std::string& path, const nlohmann::json& body, Clock::TimePoint deadline);

  // Refuses every request from now on (reads too; reason kReasonClosed),
  // aborts those in flight within about a second (libcurl calls the progress
  // callback at least that often) and ends watches. For the exit path once
  // the Lease is lost. Thread-safe.
  void Close();

  // host:port of the server, as in the metric's `host` label.
  const std::string& host() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The Content-Type for a patch type.
const char* PatchContentType(PatchType type);

// host:port of a server URL ("https://h:6443/x" -> "h:6443"; the scheme's
// default port when absent).
std::string HostPort(const std::string& server);

}  // namespace ms::kube
