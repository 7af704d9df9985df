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
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "shared/transport/http1.h"
#include "shared/transport/listener.h"
#include "shared/transport/worker.h"

namespace ms::transport {

struct HttpServerOptions {
  std::string host = "0.0.0.0";  // an address, or "" for all
  int port = 0;                  // 0: any free port
  int threads = 2;               // workers (event loops)
  // Open connections, in total, from one address and handshaking (0: no
  // limit). At a limit a connection owed no answer gives way to the new one
  // (connection_table.h); when none can, the new one is closed at once.
  size_t max_connections = 1000;
  size_t max_connections_per_peer = 0;
  size_t max_handshakes = 0;
  // A TLS handshake not finished this long after the connection was
  // accepted: the connection is closed.
  std::chrono::milliseconds handshake_timeout{10000};
  // Bytes of request bodies being received (their Content-Length, reserved
  // when the head is read) and of answers waiting to be sent, at once; one
  // peer at most max_body_bytes_per_peer of it (0: all). Beyond, a request
  // is answered 503 with Retry-After and its connection closed. 0: none.
  size_t max_body_bytes_in_flight = 0;
  size_t max_body_bytes_per_peer = 0;
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

  // After the client CAs changed: connections whose TLS session may no
  // longer serve end, the idle ones at once, the others after their next
  // answer (tls_sessions.h).
  void EndInvalidSessions();

  // Bytes of bodies in flight, for tests.
  size_t body_bytes_reserved() const { return bodies_.reserved(); }
  // Open connections (their places in the table), for tests and the log.
  size_t connections() const { return shared_.table.open(); }

 private:
  HttpServerOptions options_;
  Connection::Handler handler_;
  Connection::RefusalHook on_refusal_;
  std::shared_ptr<spdlog::logger> logger_;
  clock::SystemClock clock_;  // the Date header's wall time
  Listener listener_;
  BodyBudget bodies_;
  ServerShared shared_;
  std::vector<std::thread> threads_;
};

}  // namespace ms::transport
