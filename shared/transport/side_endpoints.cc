#include "shared/transport/side_endpoints.h"

#include <ostream>
#include <utility>

#include "shared/transport/gzip.h"

namespace ms::transport {

HttpServerOptions SideEndpointOptions() {
  HttpServerOptions o;
  // One loop: the answers take microseconds (/metrics a few milliseconds),
  // and an idle connection costs no thread.
  o.threads = 1;
  // Enough for 2,000 clients at once (each at most its 8 KiB head: 16 MiB),
  // one address at most a quarter of them; at a limit a connection owed no
  // answer (of the address holding the most) gives way to the new one, so
  // that the kubelet's probe and Prometheus' scrape always get a connection.
  o.max_connections = 2000;
  o.max_connections_per_peer = 500;
  o.limits.max_header_bytes = 8 * 1024;
  o.limits.max_headers = 64;
  o.limits.max_body_bytes = 64 * 1024;
  // A request arrives in full within 5 s of its first byte, or gets 408; a
  // kept-alive connection is closed after 5 s without one (as cpp-httplib,
  // which served these before: scrapes and probes come every 10 s or more).
  o.limits.read_timeout = std::chrono::seconds(5);
  o.limits.idle_timeout = std::chrono::seconds(5);
  // /metrics over HTTPS: handshakes have their own deadline and share.
  o.handshake_timeout = std::chrono::seconds(5);
  o.max_handshakes = 500;
  return o;
}

EndpointServer::EndpointServer(std::shared_ptr<spdlog::logger> logger, HttpServerOptions options)
    : logger_(std::move(logger)), options_(std::move(options)) {}

EndpointServer::~EndpointServer() { Stop(); }

void EndpointServer::ServeProbes(std::function<bool()> healthy, std::function<bool(std::string*)> ready) {
  healthy_ = std::move(healthy);
  ready_ = std::move(ready);
  probes_ = true;
}

void EndpointServer::ServeMetrics(std::vector<const prometheus::Collectable*> collectables, MetricsGate gate) {
  collectables_ = std::move(collectables);
  gate_ = std::move(gate);
  metrics_ = true;
}

Response EndpointServer::Serve(const Request& request) const {
  const bool probe = probes_ && (request.path == "/healthz" || request.path == "/readyz");
  const bool scrape = metrics_ && request.path == "/metrics";
  if (!probe && !scrape) return Response{404, "text/plain; charset=utf-8", "404 page not found\n", {}};
  if (request.method != "GET" && request.method != "HEAD")
    return Response{405, "text/plain; charset=utf-8", "method not allowed: use GET\n", {{"Allow", "GET, HEAD"}}};
  if (scrape && gate_) {
    GateDecision d = gate_(request);
    if (d.status != 200) {
      std::vector<std::pair<std::string, std::string>> headers;
      if (d.status == 401) headers.emplace_back("WWW-Authenticate", "Bearer");
      return Response{d.status, "text/plain; charset=utf-8", d.reason + "\n", std::move(headers)};
    }
  }
  if (scrape) return Scrape(request);
  if (request.path == "/healthz") {
    if (healthy_()) return Response{200, "text/plain", "ok\n", {}};
    return Response{503, "text/plain", "unhealthy\n", {}};
  }
  std::string why;
  if (ready_(&why)) return Response{200, "text/plain", "ok\n", {}};
  return Response{503, "text/plain", "not ready: " + why + "\n", {}};
}

Response EndpointServer::Scrape(const Request& request) const {
  // Vary: a cache between Prometheus and us must not hand a gzip answer to
  // a client that did not ask for one.
  if (!AcceptsGzip(request.Header("accept-encoding")))
    return Response{200, metrics::kContentType, metrics::Serialize(collectables_), {{"Vary", "Accept-Encoding"}}};
  std::string body = Gzipped([this](std::ostream& out) { metrics::Serialize(collectables_, out); });
  return Response{
      200, metrics::kContentType, std::move(body), {{"Content-Encoding", "gzip"}, {"Vary", "Accept-Encoding"}}};
}

bool EndpointServer::Start(const std::string& host, int port, std::string* error, SSL_CTX* ctx) {
  HttpServerOptions o = options_;
  o.host = host;
  o.port = port;
  server_ = std::make_unique<HttpServer>(
      o, ctx, [this](const Request& r) { return Serve(r); }, nullptr, logger_);
  std::string why;
  if (!server_->Start(&why)) {
    server_.reset();
    if (error) *error = "cannot bind " + host + ":" + std::to_string(port) + ": " + why;
    return false;
  }
  return true;
}

void EndpointServer::Stop() {
  if (server_) server_->Stop();
}

SideEndpoints::SideEndpoints(std::shared_ptr<spdlog::logger> logger) : metrics_(logger), probes_(logger) {}

bool SideEndpoints::Start(const flags::HostPort& metrics_address, const flags::HostPort& probe_address,
                          const metrics::Registry& registry, std::function<bool()> healthy,
                          std::function<bool(std::string*)> ready, std::string* error, SecureMetrics secure) {
  shared_ = metrics_address.port >= 0 && metrics_address.host == probe_address.host &&
            metrics_address.port == probe_address.port;
  if (shared_ && secure.ctx) {
    if (error) *error = "the probes cannot share the metrics address when /metrics is served over HTTPS";
    return false;
  }
  std::string why;
  if (metrics_address.port >= 0) {
    metrics_.ServeMetrics(registry.Collectables(), std::move(secure.gate));
    if (shared_) metrics_.ServeProbes(healthy, ready);
    if (!metrics_.Start(metrics_address.host, metrics_address.port, &why, secure.ctx)) {
      if (error) *error = "metrics endpoint: " + why;
      return false;
    }
  }
  if (probe_address.port >= 0 && !shared_) {
    probes_.ServeProbes(std::move(healthy), std::move(ready));
    if (!probes_.Start(probe_address.host, probe_address.port, &why)) {
      if (error) *error = "probe endpoint: " + why;
      metrics_.Stop();
      return false;
    }
  }
  return true;
}

void SideEndpoints::Stop() {
  probes_.Stop();
  metrics_.Stop();
}

}  // namespace ms::transport
