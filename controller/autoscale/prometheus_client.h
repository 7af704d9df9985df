// Reading the queue length from Prometheus' HTTP API (instant queries,
// GET /api/v1/query). The autoscaler depends only on QuerySource, so tests
// drive it with a fake; PrometheusClient is the libcurl implementation.
//
// Response rules (ParseQueryResponse):
//  - status "success" with resultType "scalar": the scalar's value.
//  - resultType "vector": the SUM of every series' value (as the HPA sums the
//    series an external metric selector matches); an empty vector is an
//    error "no series". The default template already wraps the query in
//    sum(), so normally there is one series.
//  - Values are the API's strings ("12", "1e3", "NaN", "+Inf", "-Inf"). A
//    NaN or infinite value in any series, or a sum that overflows to
//    infinity, is an error (the reading is unavailable). Negative finite
//    values are returned as read (the formula treats L < 0 as 0).
//  - resultType "matrix" / "string" and malformed bodies are errors.
//  - status "error": the error is "<errorType>: <error>", whatever the HTTP
//    code (Prometheus answers 400/422/503 with such a body).
//  - Any other non-2xx answer: "HTTP <code>: <start of the body>".
//  - Transport failures (refused, timeout, DNS, TLS): curl's message (a
//    timeout's without its varying byte counts, so it reads the same each
//    time).
//  - `unreachable` is set for transport failures and HTTP 5xx answers: the
//    endpoint, not the query, failed (the circuit breaker counts these).
//  - No error text shows a secret: the token, the password (and the basic
//    credentials as sent), a --prometheus-header-file value, the password of
//    the URL's userinfo are "[redacted]" wherever they appear (a proxy that
//    echoes the request in its error page).
//
// Authentication (PrometheusAuth, prometheus_credentials.h): the headers of
// each request from PrometheusCredentials; a 401 makes it read its files
// again, and the query is sent once more, within its deadline, when a value
// changed (a token rotated before the minute was up). TLS: the CA, the
// client certificate and its key are files libcurl reads at each handshake,
// and each query is a connection of its own, so a rotated certificate is
// presented from the next query on.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "controller/autoscale/prometheus_auth.h"
#include "controller/autoscale/prometheus_credentials.h"
#include "shared/clock/clock.h"

namespace ms::autoscale {

// A value or an error, never both.
struct QueryResult {
  bool ok = false;
  double value = 0;          // finite when ok
  std::string error;         // non-empty when !ok
  bool unreachable = false;  // !ok because the endpoint did not answer (see above)
  int series = 1;            // how many series `value` sums (1 for a scalar)

  static QueryResult Value(double v, int series = 1) { return {true, v, {}, false, series}; }
  static QueryResult Error(std::string e) { return {false, 0, std::move(e), false, 0}; }
  static QueryResult Unreachable(std::string e) { return {false, 0, std::move(e), true, 0}; }
};

// Where the readings come from. Implementations must be thread-safe: the
// poller's threads call Query() at once. A call may block up to the
// implementation's deadline (PrometheusClientOptions::timeout).
class QuerySource {
 public:
  virtual ~QuerySource() = default;
  // Runs the instant query `promql` and reduces its answer to one number by
  // the rules above.
  virtual QueryResult Query(const std::string& promql) = 0;
};

struct PrometheusClientOptions {
  std::chrono::milliseconds timeout{5000};          // whole request: the per-query deadline
  std::chrono::milliseconds connect_timeout{2000};  // capped at `timeout`
  PrometheusAuth auth;                              // credentials, headers, TLS files (checked already)
  std::string no_proxy;                             // CURLOPT_NOPROXY when non-empty ("*": never proxy)
  std::size_t max_response_bytes = 8 * 1024 * 1024;
};

// The Prometheus HTTP API over libcurl. `base_url` is the --prometheus-url
// value: http(s)://host[:port][/path/prefix] with or without trailing
// slashes; queries go to <base without trailing '/'>/api/v1/query?query=...
// One curl easy handle per call, so Query() is thread-safe. libcurl must be
// set up first (kube::curl::GlobalInit, once in main). `clock` times the
// re-reads of the credentials' files.
class PrometheusClient final : public QuerySource {
 public:
  PrometheusClient(std::string base_url, PrometheusClientOptions options, const clock::Clock& clock);
  PrometheusClient(const PrometheusClient&) = delete;
  PrometheusClient& operator=(const PrometheusClient&) = delete;

  QueryResult Query(const std::string& promql) override;

  const std::string& base_url() const { return base_url_; }

 private:
  struct Attempt;
  Attempt Send(const std::string& url, long timeout_ms);
  QueryResult Outcome(const Attempt& a, long timeout_ms) const;

  std::string base_url_;
  PrometheusClientOptions options_;
  PrometheusCredentials credentials_;
  std::vector<std::string> url_secrets_;  // the password of the URL's userinfo, if any
};

// The password of `url`'s userinfo (scheme://user:password@host...), or "".
std::string UrlPassword(std::string_view url);

// <base_url without trailing '/'>/api/v1/query?query=<promql percent-encoded
// by kube::UrlEncode>.
std::string QueryUrl(std::string_view base_url, std::string_view promql);

// Reduces an HTTP answer from /api/v1/query to a QueryResult (rules above).
QueryResult ParseQueryResponse(long http_status, std::string_view body);

}  // namespace ms::autoscale
