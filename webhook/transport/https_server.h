// An HTTPS/1.1 server on epoll, in the model of Envoy's workers: a few event
// loops (--threads), each owning its connections, all accepting from one
// listening socket. Requests are answered on the loop that read them, so a
// handler must be quick and must not block (admission handlers are pure
// functions of the request).
//
// Per request it costs one read and one write system call: the answer (head
// and body) leaves in one TLS record, and nothing polls before reading. The
// HTTP rules and timeouts are webhook/transport/http1.h's; TLS set-up (versions,
// ciphers, certificates, client verification) is the caller's SSL_CTX.
//
// A TLS handshake not finished within the read timeout is dropped; a plain
// HTTP request to the port gets "400 Client sent an HTTP request to an HTTPS
// server", as Go's servers answer; an answer the client does not read within
// the read timeout drops the connection.
#pragma once

#include <openssl/ssl.h>
#include <spdlog/logger.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "webhook/transport/http1.h"

namespace ms::http {

struct HttpsServerOptions {
  std::string host = "0.0.0.0";    // an address, or "" for all
  int port = 0;                    // 0: any free port
  int threads = 2;                 // event loops
  size_t max_connections = 10000;  // beyond: accepted and closed at once
  // A connection's answers waiting to be sent beyond which its requests are
  // not read (a client that sends without reading).
  size_t max_queued_output = 1u << 20;
  Limits limits;
};

class HttpsServer {
 public:
  // `ctx` must outlive the server.
  HttpsServer(HttpsServerOptions options, SSL_CTX& ctx, Connection::Handler handler, Connection::RefusalHook on_refusal,
              std::shared_ptr<spdlog::logger> logger);
  ~HttpsServer();
  HttpsServer(const HttpsServer&) = delete;
  HttpsServer& operator=(const HttpsServer&) = delete;

  // Binds and starts the loops. False + error when the address cannot be
  // bound.
  bool Start(std::string* error);
  int port() const { return port_; }
  // Stops accepting, closes idle connections, finishes requests already
  // being received (up to the read timeout), then joins the loops.
  void Stop();

  // Open connections, for tests and the log.
  size_t connections() const { return open_connections_.load(); }

 private:
  class Loop;

  HttpsServerOptions options_;
  SSL_CTX& ctx_;
  Connection::Handler handler_;
  Connection::RefusalHook on_refusal_;
  std::shared_ptr<spdlog::logger> logger_;
  SystemClock clock_;  // the Date header's wall time
  int listen_fd_ = -1;
  int port_ = -1;
  std::atomic<size_t> open_connections_{0};
  std::atomic<bool> stopping_{false};
  std::vector<std::unique_ptr<Loop>> loops_;
  std::vector<std::thread> threads_;
};

}  // namespace ms::http
