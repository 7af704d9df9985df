#include "webhook/server.h"

#include <openssl/err.h>

#include <cstdio>

#include "shared/log/logging.h"

namespace ms::webhook {

Server::Server(ServerOptions options, std::vector<const admission::Handler*> handlers, WebhookMetrics& metrics,
               std::shared_ptr<spdlog::logger> logger)
    : options_(std::move(options)), logger_(std::move(logger)) {
  for (const admission::Handler* h : handlers) routes_.try_emplace(h->path(), h, metrics);
}

Server::~Server() { Stop(); }

bool Server::Start(std::string* error) {
  try {
    reloader_ = std::make_unique<transport::CertificateReloader>(options_.cert_file, options_.key_file, logger_,
                                                                 options_.tls.client_ca_file);
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
  ctx_.reset(SSL_CTX_new(TLS_server_method()));
  std::string tls_error;
  if (!ctx_) tls_error = ERR_error_string(ERR_get_error(), nullptr);
  if (!ctx_ || !transport::ConfigureServerContext(*ctx_, options_.tls, *reloader_, &tls_error)) {
    if (error) *error = "TLS set-up failed: " + tls_error;
    return false;
  }

  transport::HttpServerOptions o = options_.http;
  o.limits.max_body_bytes = admission::kMaxBodyBytes;
  server_ = std::make_unique<transport::HttpServer>(
      o, ctx_.get(), [this](const transport::Request& req) { return Serve(req); },
      [this](const transport::Request& req, const transport::Response& res) { Refused(req, res); }, logger_);
  if (!server_->Start(error)) return false;
  port_ = server_->port();
  // New client CAs end the sessions the old ones verified.
  reload_loop_ = std::make_unique<transport::ReloadLoop>(*reloader_, options_.cert_poll_interval,
                                                         [this] { server_->EndInvalidSessions(); });
  return true;
}

void Server::Refused(const transport::Request& req, const transport::Response& res) {
  admission::Outcome outcome;
  outcome.decision = "rejected";
  outcome.message = res.body;
  while (!outcome.message.empty() && outcome.message.back() == '\n') outcome.message.pop_back();
  auto it = routes_.find(req.path);
  Record(req, it != routes_.end() ? &it->second.metrics : nullptr, res.status, outcome, 0);
}

void Server::Record(const transport::Request& req, RouteMetrics* m, int status, const admission::Outcome& outcome,
                    double seconds) {
  const std::string_view operation = admission::OperationLabel(outcome.operation);
  if (m) {
    m->Requests(status).Increment();
    m->Decisions(operation, outcome.decision).Increment();
  }
  // Allowed reviews are logged at debug, denials at info, refusals at warn:
  // nothing of the line is built when its level is off.
  const bool denied = outcome.decision == "denied", rejected = outcome.decision == "rejected";
  const auto level = denied ? spdlog::level::info : rejected ? spdlog::level::warn : spdlog::level::debug;
  if (!logger_->should_log(level)) return;
  char latency[32];
  std::snprintf(latency, sizeof latency, "%.6f", seconds);
  // The line's fields (JSON keys, or key=value in text); values the client
  // sent are escaped by the formatter.
  const log::FieldScope fields({{"webhook", req.path},
                                {"uid", outcome.uid},
                                {"kind", outcome.kind},
                                {"namespace", outcome.ns},
                                {"name", outcome.name},
                                {"operation", outcome.operation},
                                {"allowed", outcome.decision == "allowed" ? "true" : "false"},
                                {"code", std::to_string(denied ? outcome.status_code : status)},
                                {"latency", latency}});
  if (denied) {
    logger_->info("denied {} {} {} (uid {}, code {}): {}", req.path, outcome.operation, outcome.Object(), outcome.uid,
                  outcome.status_code, outcome.message);
  } else if (rejected) {
    logger_->warn("rejected a request to {} from {} with HTTP {}: {}", req.path.empty() ? "?" : req.path,
                  req.remote_addr, status, outcome.message);
  } else {
    logger_->debug("allowed {} {} {} (uid {})", req.path, outcome.operation, outcome.Object(), outcome.uid);
  }
}

transport::Response Server::Serve(const transport::Request& req) {
  transport::Response reply = Answer(req);
  reply.close = quiescing_.load(std::memory_order_relaxed);
  return reply;
}

transport::Response Server::Answer(const transport::Request& req) {
  auto route = routes_.find(req.path);
  if (route == routes_.end()) return transport::Response{404, "text/plain; charset=utf-8", "404 page not found\n", {}};
  if (req.method != "POST")
    return transport::Response{
        405, "text/plain; charset=utf-8", req.path + " accepts POST only\n", {{"Allow", "POST"}}};

  RouteMetrics& m = route->second.metrics;
  m.in_flight.Increment();
  const auto start = std::chrono::steady_clock::now();

  admission::Outcome outcome;
  const std::string* content_type = req.Header("content-type");
  transport::Response reply = admission::ServeReview(
      req.body, content_type ? std::string_view(*content_type) : std::string_view(), *route->second.handler, &outcome);

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.latency.Observe(seconds);
  m.in_flight.Decrement();
  Record(req, &m, reply.status, outcome, seconds);
  return reply;
}

void Server::Stop() {
  reload_loop_.reset();          // first: its client CA hook calls into the server
  if (server_) server_->Stop();  // requests being received are answered first
}

}  // namespace ms::webhook
