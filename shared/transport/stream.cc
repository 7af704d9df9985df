#include "shared/transport/stream.h"

#include <sys/socket.h>

#include <cerrno>

namespace ms::transport {

void Stream::HalfClose() {
  SendCloseNotify();
  ::shutdown(fd_.get(), SHUT_WR);
}

bool Stream::Linger(size_t& budget) {
  char buf[16 * 1024];
  for (;;) {
    const ssize_t n = ::recv(fd_.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0 && static_cast<size_t>(n) < budget) {
      budget -= static_cast<size_t>(n);
      continue;
    }
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
  }
}

}  // namespace ms::transport
