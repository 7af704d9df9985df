// An HTTP/1.1 server on epoll, over TLS (the webhook's admission port) or
// plain TCP (the side endpoints of both programs), in the model of Envoy's workers: a few
// workers (--threads), each an event loop on its own thread that owns its
// connections (worker.h), all accepting from one listening socket
// (listener.h). Requests are answered on the worker that read them, so a
// handler must be quick and must not block (admission handlers are pure
// functions of the request). The HTTP rules and timeouts are
// transport/http1.h's, one connection's I/O server_connection.h's;
// TLS set-up (versions, ciphers, certificates, client verification) is the
// caller's SSL_CTX.
#pragma once

#include <openssl/ssl.h>
#include <spdlog/logger.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "transport/http1.h"
#include "transport/listener.h"
#include "transport/worker.h"

namespace ms::transport {

struct HttpServerOptions {
  std::string host = "0.0.0.0";         // an address, or "" for all
  int port = 0;                         // 0: any free port
  int threads = 2;                      // workers (event loops)
  size_t max_connections = 1000;        // beyond: accepted and closed at once
  size_t max_connections_per_peer = 0;  // from one address; 0: only the total
  // Bytes of request bodies being received at once (their Content-Length,
  // reserved when the head is read), one peer at most half of it; beyond, a
  // request is answered 503 with Retry-After and its connection closed. 0: none.
  size_t max_body_bytes_in_flight = 0;
  // A connection's answers waiting to be sent beyond which its requests are
  // not read (a client that sends without reading).
  size_t max_queued_output = 1u << 20;
  // Reads (16 KiB each) a connection's turn may make before the other
  // connections of its loop get theirs; it is then driven again after them.
  int reads_per_turn = 64;
  Limits limits;
};

class HttpServer {
 public:
  // `ctx` must outlive the server; nullptr: plain HTTP.
  HttpServer(HttpServerOptions options, SSL_CTX* ctx, Connection::Handler handler, Connection::RefusalHook on_refusal,
             std::shared_ptr<spdlog::logger> logger);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts the workers. False + error when the address cannot be
  // bound.
  bool Start(std::string* error);
  int port() const { return listener_.port(); }
  // Stops accepting, closes idle connections, finishes requests already
  // being received (up to the read timeout), then joins the workers.
  void Stop();

  // Bytes of bodies in flight, for tests.
  size_t body_bytes_reserved() const { return bodies_.reserved(); }
  // Open connections, for tests and the log.
  size_t connections() const { return shared_.budget.open(); }

 private:
  HttpServerOptions options_;
  Connection::Handler handler_;
  Connection::RefusalHook on_refusal_;
  std::shared_ptr<spdlog::logger> logger_;
  SystemClock clock_;  // the Date header's wall time
  Listener listener_;
  BodyBudget bodies_;
  ServerShared shared_;
  std::vector<std::thread> threads_;
};

}  // namespace ms::transport
