#include "shared/transport/plain_connection.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace ms::transport {

namespace {

// After a failed recv or send: `again` when the socket is not ready, else kFailed and why.
Stream::Io Stopped(Stream::Io again, const char* what, std::string& failure) {
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return again;
  failure = std::string(what) + ": " + std::strerror(errno);
  return Stream::Io::kFailed;
}

}  // namespace

Stream::Io PlainConnection::Read(char* buf, size_t cap, size_t* n) {
  const ssize_t r = ::recv(fd_.get(), buf, cap, MSG_DONTWAIT);
  drained_ = r < static_cast<ssize_t>(cap);
  if (r > 0) {
    *n = static_cast<size_t>(r);
    return Io::kDone;
  }
  if (r == 0) return Io::kClosed;
  return Stopped(Io::kWantRead, "recv", failure_);
}

Stream::Io PlainConnection::Write(std::string& out) {
  size_t sent = 0;
  while (sent < out.size()) {
    const ssize_t r = ::send(fd_.get(), out.data() + sent, out.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r < 0) {
      out.erase(0, sent);
      return Stopped(Io::kWantWrite, "send", failure_);
    }
    sent += static_cast<size_t>(r);
  }
  out.clear();
  return Io::kDone;
}

}  // namespace ms::transport
