#include "webhook/server.h"

#include <openssl/err.h>

namespace ms::webhook {

Server::Server(ServerOptions options, std::vector<const Handler*> handlers, prometheus::Registry& registry,
               std::shared_ptr<spdlog::logger> logger)
    : options_(std::move(options)),
      logger_(std::move(logger)),
      requests_(prometheus::BuildCounter()
                    .Name("controller_runtime_webhook_requests_total")
                    .Help("Total number of admission requests by HTTP status code.")
                    .Register(registry)),
      latency_(prometheus::BuildHistogram()
                   .Name("controller_runtime_webhook_latency_seconds")
                   .Help("Histogram of the latency of processing admission requests")
                   .Register(registry)),
      in_flight_(prometheus::BuildGauge()
                     .Name("controller_runtime_webhook_requests_in_flight")
                     .Help("Current number of admission requests being served.")
                     .Register(registry)),
      decisions_(prometheus::BuildCounter()
                     .Name("modelservice_admission_decisions_total")
                     .Help("Admission decisions by webhook, operation and decision (allowed, denied, rejected).")
                     .Register(registry)) {
  // Pre-create the series so dashboards see zeros before traffic.
  for (const Handler* h : handlers) routes_[h->path()] = Route{h, ResolveMetrics(h->path())};
}

Server::RouteMetrics Server::ResolveMetrics(const std::string& path) {
  RouteMetrics m;
  m.in_flight = &in_flight_.Add({{"webhook", path}});
  m.latency = &latency_.Add({{"webhook", path}}, metrics::ExponentialBuckets(0.00005, 2, 16));
  // Every code ServeReview and the pre-routing hook answer with.
  for (int code : {200, 400, 408, 411, 413, 415})
    m.requests[code] = &requests_.Add({{"webhook", path}, {"code", std::to_string(code)}});
  for (const char* op : {"CREATE", "UPDATE", "DELETE", "CONNECT"})
    for (const char* decision : {"allowed", "denied"})
      m.decisions[{op, decision}] = &decisions_.Add({{"webhook", path}, {"operation", op}, {"decision", decision}});
  m.decisions[{"UNKNOWN", "rejected"}] =
      &decisions_.Add({{"webhook", path}, {"operation", "UNKNOWN"}, {"decision", "rejected"}});
  return m;
}

prometheus::Counter& Server::RequestCounter(RouteMetrics& m, const std::string& path, int code) {
  auto it = m.requests.find(code);
  if (it != m.requests.end()) return *it->second;
  return requests_.Add({{"webhook", path}, {"code", std::to_string(code)}});  // rare: thread-safe slow path
}

prometheus::Counter& Server::DecisionCounter(RouteMetrics& m, const std::string& path, const std::string& operation,
                                             const std::string& decision) {
  auto it = m.decisions.find({operation, decision});
  if (it != m.decisions.end()) return *it->second;
  return decisions_.Add({{"webhook", path}, {"operation", operation}, {"decision", decision}});
}

Server::~Server() { Stop(); }

bool Server::Start(std::string* error) {
  try {
    reloader_ = std::make_unique<tls::CertificateReloader>(options_.cert_file, options_.key_file, logger_,
                                                           options_.tls.client_ca_file);
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
  ctx_.reset(SSL_CTX_new(TLS_server_method()));
  std::string tls_error;
  if (!ctx_) tls_error = ERR_error_string(ERR_get_error(), nullptr);
  if (!ctx_ || !tls::ConfigureServerContext(*ctx_, options_.tls, *reloader_, &tls_error)) {
    if (error) *error = "TLS set-up failed: " + tls_error;
    return false;
  }

  http::HttpsServerOptions o = options_.http;
  o.limits.max_body_bytes = kMaxBodyBytes;
  server_ = std::make_unique<http::HttpsServer>(
      o, *ctx_, [this](const http::Request& req) { return Serve(req); },
      [this](const http::Request& req, const http::Response& res) { Refused(req, res); }, logger_);
  if (!server_->Start(error)) return false;
  port_ = server_->port();
  reload_loop_ = std::make_unique<tls::ReloadLoop>(*reloader_, options_.cert_poll_interval);
  return true;
}

void Server::Refused(const http::Request& req, const http::Response& res) {
  Outcome outcome;
  outcome.decision = "rejected";
  outcome.message = res.body;
  while (!outcome.message.empty() && outcome.message.back() == '\n') outcome.message.pop_back();
  auto it = routes_.find(req.path);
  Record(req, it != routes_.end() ? &it->second.metrics : nullptr, res.status, outcome);
}

void Server::Record(const http::Request& req, RouteMetrics* m, int status, const Outcome& outcome) {
  const std::string operation(OperationLabel(outcome.operation));
  if (m) {
    RequestCounter(*m, req.path, status).Increment();
    DecisionCounter(*m, req.path, operation, outcome.decision).Increment();
  }
  if (outcome.decision == "denied") {
    logger_->info("denied {} {} {} (uid {}, code {}): {}", req.path, outcome.operation, outcome.object, outcome.uid,
                  outcome.status_code, outcome.message);
  } else if (outcome.decision == "rejected") {
    logger_->warn("rejected a request to {} from {} with HTTP {}: {}", req.path.empty() ? "?" : req.path,
                  req.remote_addr, status, outcome.message);
  } else {
    logger_->debug("allowed {} {} {} (uid {})", req.path, outcome.operation, outcome.object, outcome.uid);
  }
}

http::Response Server::Serve(const http::Request& req) {
  auto route = routes_.find(req.path);
  if (route == routes_.end()) return http::Response{404, "text/plain; charset=utf-8", "404 page not found\n", {}};
  if (req.method != "POST")
    return http::Response{405, "text/plain; charset=utf-8", req.path + " accepts POST only\n", {{"Allow", "POST"}}};

  RouteMetrics& m = route->second.metrics;
  m.in_flight->Increment();
  const auto start = std::chrono::steady_clock::now();

  Outcome outcome;
  const std::string* content_type = req.Header("content-type");
  HttpReply reply = ServeReview(req.body, content_type ? std::string_view(*content_type) : std::string_view(),
                                *route->second.handler, &outcome);

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.latency->Observe(seconds);
  m.in_flight->Decrement();
  Record(req, &m, reply.status, outcome);
  return http::Response{reply.status, std::move(reply.content_type), std::move(reply.body), {}};
}

void Server::Stop() {
  if (server_) server_->Stop();  // requests being received are answered first
  reload_loop_.reset();
}

}  // namespace ms::webhook
