// The byte stream of one accepted connection, as the server's connections
// (server_connection.h) drive it: TLS (tls_connection.h) or plain TCP
// (plain_connection.h), non-blocking. Knows nothing of HTTP.
#pragma once

#include <cstddef>
#include <string>

#include "shared/transport/unique_fd.h"

namespace ms::transport {

class Stream {
 public:
  // What an operation left to do.
  enum class Io {
    kDone,       // finished (a read: got bytes)
    kWantRead,   // the socket must become readable first
    kWantWrite,  // the socket must become writable first
    kClosed,     // the peer ended the stream (TLS: close_notify; TCP: FIN)
    kFailed,     // reset, truncated stream, protocol error
  };

  virtual ~Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // kDone once established (at once for plain TCP). kFailed: `failure()` says why.
  virtual Io Handshake() = 0;
  // One read into `buf`: kDone with `*n` bytes, or what stopped it.
  virtual Io Read(char* buf, size_t cap, size_t* n) = 0;
  // Sends `out` from the front, erasing what was sent; kDone once all is.
  virtual Io Write(std::string& out) = 0;
  // Bytes read from the socket ahead and not handed out (epoll will not report them).
  virtual bool HasPending() const = 0;
  // The last read from the socket came back short or found it empty: it was
  // drained then, and epoll (edge-triggered) reports the next bytes that
  // come. Until then reading on would only find what HasPending() says.
  bool Drained() const { return drained_; }
  // The end of the stream for the peer, best effort (TLS: close_notify; TCP: nothing).
  virtual void SendCloseNotify() = 0;
  // After the last answer: the end of the stream and a TCP half-close.
  // Closing with unread data would reset the connection and the client could
  // lose the answer before reading it: Linger() reads and drops what it
  // still sends.
  void HalfClose();
  // Drops what arrived; false once the stream ended, failed or `budget`
  // bytes were read (time to close), true while it may still send.
  bool Linger(size_t& budget);

  int fd() const { return fd_.get(); }
  const std::string& remote() const { return remote_; }
  const std::string& failure() const { return failure_; }
  // A plain HTTP request came to a TLS port (and was answered 400).
  bool plain_http() const { return plain_http_; }
  // Once established: whether its TLS session may still serve (its age and
  // client CAs, tls_sessions.h); plain TCP always may.
  virtual bool SessionValid() const { return true; }

 protected:
  Stream(UniqueFd fd, std::string remote) : fd_(std::move(fd)), remote_(std::move(remote)) {}

  UniqueFd fd_;
  std::string remote_;
  std::string failure_;
  bool plain_http_ = false;
  bool drained_ = false;  // set by each read from the socket
};

}  // namespace ms::transport
