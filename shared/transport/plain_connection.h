// One accepted TCP connection without TLS (the side endpoints: /metrics and
// the probes): reads and writes straight on the non-blocking socket.
#pragma once

#include <memory>
#include <string>

#include "shared/transport/stream.h"

namespace ms::transport {

class PlainConnection final : public Stream {
 public:
  PlainConnection(UniqueFd fd, std::string remote) : Stream(std::move(fd), std::move(remote)) {}

  Io Handshake() override { return Io::kDone; }
  Io Read(char* buf, size_t cap, size_t* n) override;
  Io Write(std::string& out) override;
  bool HasPending() const override { return false; }
  void SendCloseNotify() override {}
};

}  // namespace ms::transport
