// The side endpoints of both programs: /healthz and /readyz on the probe
// address (plain HTTP, for the kubelet), /metrics on the metrics address
// (plain HTTP, or HTTPS with a gate that says who may read it: design.md
// §4), served by
// the same transport as the webhook's admission port (http_server.h): an
// event loop that holds no thread per connection, the HTTP/1.1 limits of
// http1.h (a request head of at most 8 KiB, no chunked bodies, a body of at
// most 64 KiB), a deadline for each request and a connection budget. Slow
// or hostile clients cost a few KiB each and never delay a probe.
#pragma once

#include <spdlog/logger.h>

#include <openssl/ssl.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "shared/flags/flags.h"
#include "shared/metrics/metrics.h"
#include "shared/transport/http_server.h"

namespace ms::transport {

// The side endpoints' limits: short deadlines and small requests, since
// their clients (the kubelet, Prometheus) send a few hundred bytes.
HttpServerOptions SideEndpointOptions();

// Whether a request may read /metrics: 200, or the refusal (401 when the
// caller is not authenticated, 403 when not allowed) and its reason. Called
// on the metrics server's loop, so it must answer from what it knows or
// after a short, bounded wait.
struct GateDecision {
  int status = 200;
  std::string reason;
};
using MetricsGate = std::function<GateDecision(const Request&)>;

// /metrics over HTTPS: the server's TLS context (its certificate, reloaded
// as the caller's context does) and, when set, who may read it.
struct SecureMetrics {
  SSL_CTX* ctx = nullptr;  // must outlive the server
  MetricsGate gate;
};

class EndpointServer {
 public:
  explicit EndpointServer(std::shared_ptr<spdlog::logger> logger, HttpServerOptions options = SideEndpointOptions());
  ~EndpointServer();
  EndpointServer(const EndpointServer&) = delete;
  EndpointServer& operator=(const EndpointServer&) = delete;

  // /healthz answers 200 "ok" while `healthy()` is true; /readyz 200 "ok"
  // while `ready()` is true, else 503 with the reason. Both are called on
  // the server's loop: they must be quick.
  void ServeProbes(std::function<bool()> healthy, std::function<bool(std::string*)> ready);
  // /metrics in the Prometheus text format 0.0.4 (gzip-coded when the
  // request's Accept-Encoding allows it): what `collectables` hold
  // (a prometheus::Registry, the process collector), in that order. They
  // must outlive the server. With a gate, only to the requests it lets in.
  void ServeMetrics(std::vector<const prometheus::Collectable*> collectables, MetricsGate gate = nullptr);

  // Binds and starts serving on a thread, over TLS when `ctx` is set (it
  // must outlive the server). Returns false (and the error) when the address
  // cannot be bound. Port 0 picks a free port (see port()).
  bool Start(const std::string& host, int port, std::string* error, SSL_CTX* ctx = nullptr);
  int port() const { return server_ ? server_->port() : -1; }
  void Stop();

 private:
  Response Serve(const Request& request) const;
  // /metrics: gzip when the request accepts it (as Prometheus does), the
  // text compressed as it is written (gzip.h); else the text.
  Response Scrape(const Request& request) const;

  std::shared_ptr<spdlog::logger> logger_;
  HttpServerOptions options_;
  std::function<bool()> healthy_;
  std::function<bool(std::string*)> ready_;
  std::vector<const prometheus::Collectable*> collectables_;
  MetricsGate gate_;
  bool probes_ = false, metrics_ = false;
  std::unique_ptr<HttpServer> server_;
};

// A program's side endpoints: /metrics on the metrics address and the probes
// on the probe address, or all three on one server when the two addresses
// are the same (not with `secure`: the kubelet probes over plain HTTP); a
// disabled address ("0", port -1) serves nothing.
class SideEndpoints {
 public:
  explicit SideEndpoints(std::shared_ptr<spdlog::logger> logger);
  // False, with an error naming the endpoint, when an address cannot be bound.
  // `registry` must outlive the endpoints; `secure.ctx` set: /metrics over
  // HTTPS behind `secure.gate`.
  bool Start(const flags::HostPort& metrics_address, const flags::HostPort& probe_address,
             const metrics::Registry& registry, std::function<bool()> healthy, std::function<bool(std::string*)> ready,
             std::string* error, SecureMetrics secure = {});
  void Stop();
  int metrics_port() const { return metrics_.port(); }
  int probe_port() const { return shared_ ? metrics_.port() : probes_.port(); }

 private:
  EndpointServer metrics_, probes_;
  bool shared_ = false;
};

}  // namespace ms::transport
