#include "shared/transport/http_server.h"

#include <algorithm>

namespace ms::transport {

HttpServer::HttpServer(HttpServerOptions options, SSL_CTX* ctx, Connection::Handler handler,
                       Connection::RefusalHook on_refusal, std::shared_ptr<spdlog::logger> logger)
    : options_(std::move(options)),
      handler_(std::move(handler)),
      on_refusal_(std::move(on_refusal)),
      logger_(std::move(logger)),
      bodies_(options_.max_body_bytes_in_flight, options_.max_body_bytes_per_peer),
      shared_({options_, handler_, on_refusal_, *logger_, clock_, &bodies_}, ctx, listener_,
              {options_.max_connections, options_.max_connections_per_peer, options_.max_handshakes}) {}

HttpServer::~HttpServer() { Stop(); }

bool HttpServer::Start(std::string* error) {
  // One TLS record per answer needs partial writes off; reading ahead saves
  // a system call per record.
  if (shared_.ctx) {
    SSL_CTX_set_mode(shared_.ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_read_ahead(shared_.ctx, 1);
  }
  std::string why;
  if (!listener_.Bind(options_.host, options_.port, &why)) {
    if (error) *error = std::move(why);
    return false;
  }
  for (int i = 0; i < std::max(1, options_.threads); ++i) {
    auto worker = std::make_unique<Worker>(shared_, i);
    if (!worker->Init(&why)) {
      shared_.workers.clear();
      listener_.Close();
      if (error) *error = std::move(why);
      return false;
    }
    shared_.workers.push_back(std::move(worker));
  }
  for (auto& w : shared_.workers) threads_.emplace_back([w = w.get()] { w->Run(); });
  return true;
}

void HttpServer::EndInvalidSessions() {
  for (auto& w : shared_.workers) w->EndInvalidSessions();
}

void HttpServer::Stop() {
  if (threads_.empty() && listener_.fd() < 0) return;
  shared_.stopping.store(true);
  // Stop listening at once: new connections are refused, not left queued
  // until the workers finish draining.
  listener_.Shutdown();
  for (auto& w : shared_.workers) w->Drain();
  for (auto& t : threads_) t.join();
  threads_.clear();
  shared_.workers.clear();
  listener_.Close();
}

}  // namespace ms::transport
