// One accepted TCP connection and its TLS session (OpenSSL), non-blocking:
// the handshake, reading what the peer sent, writing what is to be sent
// (each write one TLS record: the context has partial writes off), the
// close_notify (the half-close and the linger are stream.h's). Knows
// nothing of HTTP.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <memory>
#include <string>

#include "shared/transport/stream.h"
#include "shared/transport/tls_sessions.h"

namespace ms::transport {

class TlsConnection final : public Stream {
 public:
  // Takes `fd` (accepted, non-blocking); nullptr and why when OpenSSL cannot
  // set the connection up.
  static std::unique_ptr<TlsConnection> Accept(UniqueFd fd, SSL_CTX& ctx, std::string remote, std::string* error);

  // kFailed: `failure()` says why; a plain HTTP request has been answered
  // "400 Client sent an HTTP request to an HTTPS server" (as Go's servers
  // answer).
  Io Handshake() override;
  Io Read(char* buf, size_t cap, size_t* n) override;
  // Each write is one TLS record.
  Io Write(std::string& out) override;
  // OpenSSL reads ahead; Drained() is told by a callback on its socket BIO.
  bool HasPending() const override { return SSL_has_pending(ssl_.get()) == 1; }
  // close_notify.
  void SendCloseNotify() override;
  bool SessionValid() const override;

 private:
  TlsConnection(UniqueFd fd, SSL* ssl, std::string remote);
  struct SslDeleter {
    void operator()(SSL* s) const { SSL_free(s); }
  };

  std::unique_ptr<SSL, SslDeleter> ssl_;
  const SessionPolicy* sessions_ = nullptr;  // the context's, when it has one
  SessionOrigin origin_;                     // of its session, once established
};

}  // namespace ms::transport
