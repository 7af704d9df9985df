// One accepted TCP connection and its TLS session (OpenSSL), non-blocking:
// the handshake, reading what the peer sent, writing what is to be sent
// (each write one TLS record: the context has partial writes off), the
// close_notify, and after the last answer the half-close and the linger
// that reads and drops what the peer still sends. Knows nothing of HTTP.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "webhook/transport/unique_fd.h"

namespace ms::transport {

class TlsConnection {
 public:
  // What an operation left to do.
  enum class Io {
    kDone,       // finished (a read: got bytes)
    kWantRead,   // the socket must become readable first
    kWantWrite,  // the socket must become writable first
    kClosed,     // the peer ended the stream (close_notify)
    kFailed,     // reset, truncated stream, protocol error
  };

  // Takes `fd` (accepted, non-blocking); nullptr and why when OpenSSL cannot
  // set the connection up.
  static std::unique_ptr<TlsConnection> Accept(UniqueFd fd, SSL_CTX& ctx, std::string remote, std::string* error);

  // kDone once established. kFailed: `failure()` says why; a plain HTTP
  // request has been answered "400 Client sent an HTTP request to an HTTPS
  // server" (as Go's servers answer).
  Io Handshake();
  // One read into `buf`: kDone with `*n` bytes, or what stopped it.
  Io Read(char* buf, size_t cap, size_t* n);
  // Sends `out` from the front, erasing what was sent; kDone once all is.
  Io Write(std::string& out);
  // Bytes OpenSSL has read ahead and not handed out (epoll will not report them).
  bool HasPending() const { return SSL_has_pending(ssl_.get()) == 1; }

  // close_notify, best effort (a connection closed before its last answer).
  void SendCloseNotify();
  // After the last answer: close_notify and a TCP half-close. Closing with
  // unread data would reset the connection and the client could lose the
  // answer before reading it: Linger() reads and drops what it still sends.
  void HalfClose();
  // Drops what arrived; false once the stream ended, failed or `budget`
  // bytes were read (time to close), true while it may still send.
  bool Linger(size_t& budget);

  int fd() const { return fd_.get(); }
  const std::string& remote() const { return remote_; }
  const std::string& failure() const { return failure_; }
  bool plain_http() const { return plain_http_; }

 private:
  TlsConnection(UniqueFd fd, SSL* ssl, std::string remote);
  struct SslDeleter {
    void operator()(SSL* s) const { SSL_free(s); }
  };

  UniqueFd fd_;
  std::unique_ptr<SSL, SslDeleter> ssl_;
  std::string remote_;
  std::string failure_;
  bool plain_http_ = false;
};

}  // namespace ms::transport
