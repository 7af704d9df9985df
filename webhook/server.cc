#include "webhook/server.h"

#include "shared/http_endpoints.h"

namespace ms::webhook {

namespace {

std::string Header(const httplib::Request& req, const char* name) {
  return req.has_header(name) ? req.get_header_value(name) : std::string();
}

}  // namespace

Server::Server(ServerOptions options, std::vector<const Handler*> handlers, metrics::Registry& registry,
               std::shared_ptr<spdlog::logger> logger)
    : options_(std::move(options)),
      handlers_(std::move(handlers)),
      logger_(std::move(logger)),
      requests_(metrics::BuildCounter()
                    .Name("controller_runtime_webhook_requests_total")
                    .Help("Total number of admission requests by HTTP status code.")
                    .Register(registry)),
      latency_(metrics::BuildHistogram()
                   .Name("controller_runtime_webhook_latency_seconds")
                   .Help("Histogram of the latency of processing admission requests")
                   .Register(registry)),
      in_flight_(metrics::BuildGauge()
                     .Name("controller_runtime_webhook_requests_in_flight")
                     .Help("Current number of admission requests being served.")
                     .Register(registry)),
      decisions_(metrics::BuildCounter()
                     .Name("modelservice_admission_decisions_total")
                     .Help("Admission decisions by webhook, operation and decision (allowed, denied, rejected).")
                     .Register(registry)) {
  // Pre-create the series so dashboards see zeros before traffic.
  for (const Handler* h : handlers_) route_metrics_[h->path()] = ResolveMetrics(h->path());
}

Server::RouteMetrics Server::ResolveMetrics(const std::string& path) {
  RouteMetrics m;
  m.in_flight = &in_flight_.Add({{"webhook", path}});
  m.latency = &latency_.Add({{"webhook", path}}, metrics::ExponentialBuckets(0.00005, 2, 16));
  // Every code ServeReview and the pre-routing hook answer with.
  for (int code : {200, 400, 411, 413, 415})
    m.requests[code] = &requests_.Add({{"webhook", path}, {"code", std::to_string(code)}});
  for (const char* op : {"CREATE", "UPDATE", "DELETE", "CONNECT"})
    for (const char* decision : {"allowed", "denied"})
      m.decisions[{op, decision}] = &decisions_.Add({{"webhook", path}, {"operation", op}, {"decision", decision}});
  m.decisions[{"UNKNOWN", "rejected"}] =
      &decisions_.Add({{"webhook", path}, {"operation", "UNKNOWN"}, {"decision", "rejected"}});
  return m;
}

metrics::Counter& Server::RequestCounter(RouteMetrics& m, const std::string& path, int code) {
  auto it = m.requests.find(code);
  if (it != m.requests.end()) return *it->second;
  return requests_.Add({{"webhook", path}, {"code", std::to_string(code)}});  // rare: thread-safe slow path
}

metrics::Counter& Server::DecisionCounter(RouteMetrics& m, const std::string& path, const std::string& operation,
                                          const std::string& decision) {
  auto it = m.decisions.find({operation, decision});
  if (it != m.decisions.end()) return *it->second;
  return decisions_.Add({{"webhook", path}, {"operation", operation}, {"decision", decision}});
}

Server::~Server() { Stop(); }

bool Server::Start(std::string* error) {
  try {
    reloader_ = std::make_unique<tls::CertificateReloader>(options_.cert_file, options_.key_file, logger_);
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
  std::string tls_error;
  server_ = std::make_unique<httplib::SSLServer>([this, &tls_error](SSL_CTX& ctx) {
    return tls::ConfigureServerContext(ctx, options_.tls, *reloader_, &tls_error);
  });
  if (!server_->is_valid()) {
    if (error) *error = "TLS set-up failed: " + tls_error;
    return false;
  }
  server_->set_tcp_nodelay(true);
  server_->set_keep_alive_max_count(1000000);
  server_->set_keep_alive_timeout(options_.keep_alive_timeout.count());
  server_->set_read_timeout(options_.read_timeout.count(), 0);
  server_->set_write_timeout(options_.read_timeout.count(), 0);
  server_->set_payload_max_length(kMaxBodyBytes);
  const int threads = options_.threads;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };  // owned by httplib

  // Runs before the body is read: refuse what would make us buffer an
  // unbounded body (chunked encoding bypasses payload_max_length in 0.11).
  // Requests refused before routing are counted and logged like the others.
  auto refuse = [this](const httplib::Request& req, int status, const std::string& why) {
    Outcome outcome;
    outcome.decision = "rejected";
    outcome.message = why;
    auto it = route_metrics_.find(req.path);
    Record(req, it != route_metrics_.end() ? &it->second : nullptr, status, outcome);
  };
  server_->set_pre_routing_handler([refuse](const httplib::Request& req, httplib::Response& res) {
    auto te = Header(req, "Transfer-Encoding");
    if (!te.empty()) {
      refuse(req, 411, "Transfer-Encoding " + te);
      res.status = 411;
      res.set_content("Transfer-Encoding is not supported: send a Content-Length\n", "text/plain; charset=utf-8");
      return httplib::Server::HandlerResponse::Handled;
    }
    auto cl = Header(req, "Content-Length");
    if (!cl.empty()) {
      char* end = nullptr;
      unsigned long long n = std::strtoull(cl.c_str(), &end, 10);
      if (end == cl.c_str() || *end != '\0' || n > kMaxBodyBytes) {
        refuse(req, 413, "Content-Length " + cl);
        res.status = 413;
        res.set_content("request body too large: the limit is " + std::to_string(kMaxBodyBytes) + " bytes\n",
                        "text/plain; charset=utf-8");
        res.set_header("Connection", "close");
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server_->set_exception_handler([this](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    logger_->error("internal error serving {}: {}", req.path, what);
    res.status = 500;
    res.set_content("internal error\n", "text/plain; charset=utf-8");
  });
  for (const Handler* h : handlers_) Route(*h);

  port_ = BindAndServe(*server_, options_.host, options_.port, thread_, error);
  if (port_ < 0) return false;
  reload_loop_ = std::make_unique<tls::ReloadLoop>(*reloader_, options_.cert_poll_interval);
  return true;
}

void Server::Record(const httplib::Request& req, RouteMetrics* m, int status, const Outcome& outcome) {
  const std::string operation = outcome.operation.empty() ? "UNKNOWN" : outcome.operation;
  if (m) {
    RequestCounter(*m, req.path, status).Increment();
    DecisionCounter(*m, req.path, operation, outcome.decision).Increment();
  }
  if (outcome.decision == "denied") {
    logger_->info("denied {} {} {} (uid {}, code {}): {}", req.path, outcome.operation, outcome.object, outcome.uid,
                  outcome.status_code, outcome.message);
  } else if (outcome.decision == "rejected") {
    logger_->warn("rejected a request to {} from {} with HTTP {}: {}", req.path, req.remote_addr, status,
                  outcome.message);
  } else {
    logger_->debug("allowed {} {} {} (uid {})", req.path, outcome.operation, outcome.object, outcome.uid);
  }
}

void Server::Route(const Handler& handler) {
  const std::string path = handler.path();
  RouteMetrics& m = route_metrics_.at(path);  // resolved in the constructor
  server_->Post(path, [this, &handler, &m](const httplib::Request& req, httplib::Response& res) {
    auto& in_flight = *m.in_flight;
    in_flight.Increment();
    const auto start = std::chrono::steady_clock::now();

    Outcome outcome;
    HttpReply reply = ServeReview(req.body, Header(req, "Content-Type"), handler, &outcome);
    res.status = reply.status;
    res.set_content(std::move(reply.body), reply.content_type.c_str());

    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    m.latency->Observe(seconds);
    in_flight.Decrement();
    Record(req, &m, reply.status, outcome);
  });
  auto method_not_allowed = [path](const httplib::Request&, httplib::Response& res) {
    res.status = 405;
    res.set_header("Allow", "POST");
    res.set_content(path + " accepts POST only\n", "text/plain; charset=utf-8");
  };
  server_->Get(path, method_not_allowed);
  server_->Put(path, method_not_allowed);
  server_->Delete(path, method_not_allowed);
}

void Server::Stop() {
  if (server_) StopServing(*server_, thread_);  // workers finish their requests
  reload_loop_.reset();
}

}  // namespace ms::webhook
