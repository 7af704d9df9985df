// The listening socket of the HTTP server: bound with getaddrinfo (host
// "" for all addresses, port 0 for any free one), non-blocking, shared by
// every worker (each watches it with EPOLLEXCLUSIVE: a new connection wakes
// one of them).
#pragma once

#include <sys/socket.h>

#include <string>

#include "shared/transport/unique_fd.h"

namespace ms::transport {

class Listener {
 public:
  // Binds and listens; false and why when it cannot.
  bool Bind(const std::string& host, int port, std::string* error);
  int fd() const { return fd_.get(); }
  int port() const { return port_; }

  // One pending connection (non-blocking, close-on-exec), or -1 with errno.
  int Accept(sockaddr_storage* peer) const;
  // Refuses new connections from now on (pending ones are not accepted).
  void Shutdown() const;
  void Close() { fd_.reset(); }

 private:
  UniqueFd fd_;
  int port_ = -1;
};

// The address of a peer, as text ("" for families other than IPv4/IPv6).
std::string PeerAddress(const sockaddr_storage& addr);

}  // namespace ms::transport
