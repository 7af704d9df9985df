// The HTTPS admission server: routes POST /validate and /mutate to their
// Handlers through ServeReview, over TLS with hot certificate reload, with
// the controller-runtime webhook metrics. The transport is
// shared/transport/http_server.h; this file only routes, counts and logs.
#pragma once

#include <openssl/ssl.h>
#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "shared/transport/http_server.h"
#include "shared/transport/tls.h"
#include "webhook/admission/handler.h"
#include "webhook/admission/review.h"
#include "webhook/metrics.h"

namespace ms::webhook {

struct ServerOptions {
  // Address, event loops and timeouts; limits.max_body_bytes is always
  // kMaxBodyBytes, the API server's limit.
  transport::HttpServerOptions http;
  std::string cert_file, key_file;
  transport::ServerTlsOptions tls;
  std::chrono::milliseconds cert_poll_interval{1000};
};

class Server {
 public:
  Server(ServerOptions options, std::vector<const admission::Handler*> handlers, WebhookMetrics& metrics,
         std::shared_ptr<spdlog::logger> logger);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Loads the certificate, binds and serves on a thread. False + error when
  // the certificate cannot be loaded or the port bound.
  bool Start(std::string* error);
  int port() const { return port_; }
  // From now on each answer closes its connection (Connection: close): a
  // server about to stop (--shutdown-delay) keeps serving, but leaves no
  // idle connection that a client could send its next request on just as
  // Stop() closes it. Thread-safe.
  void Quiesce() { quiescing_.store(true, std::memory_order_relaxed); }
  // Stops accepting, lets requests in flight finish, joins.
  void Stop();
  transport::CertificateReloader* certificates() { return reloader_.get(); }

 private:
  struct Route {
    Route(const admission::Handler* h, WebhookMetrics& m) : handler(h), metrics(m, h->path()) {}
    const admission::Handler* handler;
    RouteMetrics metrics;
  };
  transport::Response Serve(const transport::Request& req);
  transport::Response Answer(const transport::Request& req);  // Serve's, before Quiesce's close
  // A request the HTTP layer refused before routing (411, 413, 408, ...).
  void Refused(const transport::Request& req, const transport::Response& res);
  // Counts a finished request (when `m` is its route's metrics) and logs it:
  // denials at info with the reason, rejections at warn, allows at debug.
  void Record(const transport::Request& req, RouteMetrics* m, int status, const admission::Outcome& outcome,
              double seconds);

  ServerOptions options_;
  std::shared_ptr<spdlog::logger> logger_;
  std::map<std::string, Route, std::less<>> routes_;  // by path; filled before serving, then read-only
  std::unique_ptr<transport::CertificateReloader> reloader_;
  std::unique_ptr<transport::ReloadLoop> reload_loop_;
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx_{nullptr, SSL_CTX_free};
  std::unique_ptr<transport::HttpServer> server_;
  int port_ = -1;
  std::atomic<bool> quiescing_{false};
};

}  // namespace ms::webhook
