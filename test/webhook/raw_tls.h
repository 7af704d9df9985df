// A TLS client on a raw socket for the webhook's server tests, for what
// libcurl will not do: many connections at once, from other loopback
// addresses, pipelining, sending part of a request.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

namespace ms::webhook {

// A TLS client on a raw socket, for what libcurl will not do: many
// connections at once, pipelining, sending part of a request.
class RawTls {
 public:
  explicit RawTls(int port) : ctx_(SSL_CTX_new(TLS_client_method()), SSL_CTX_free), ssl_(nullptr, SSL_free) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (port >= 0) Connect(port);
  }
  // From the loopback address `source` (127.0.0.2, ...), as another client
  // host would connect.
  RawTls(int port, const char* source) : RawTls(-1) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    inet_pton(AF_INET, source, &from.sin_addr);
    bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from);
    Connect(port);
  }
  void Connect(int port) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    timeval tv{10, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ssl_.reset(SSL_new(ctx_.get()));
    SSL_set_fd(ssl_.get(), fd_);
  }
  // Before connecting: a small receive buffer and a send timeout.
  RawTls(int port, int rcvbuf, int send_timeout_s) : RawTls(-1) {
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    timeval tv{send_timeout_s, 0};
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    Connect(port);
  }
  ~RawTls() { close(fd_); }
  RawTls(const RawTls&) = delete;
  RawTls& operator=(const RawTls&) = delete;
  // Presents this certificate when the server asks for one.
  bool UseCertificate(const std::string& cert_file, const std::string& key_file) {
    return SSL_use_certificate_chain_file(ssl_.get(), cert_file.c_str()) == 1 &&
           SSL_use_PrivateKey_file(ssl_.get(), key_file.c_str(), SSL_FILETYPE_PEM) == 1;
  }
  int fd() const { return fd_; }
  // Waits for the server's close_notify (true), or anything else: bytes, a
  // reset, the receive timeout (false).
  bool ReadsCloseNotify() {
    char buf[256];
    return SSL_read(ssl_.get(), buf, sizeof buf) <= 0 && SSL_get_error(ssl_.get(), 0) == SSL_ERROR_ZERO_RETURN;
  }
  bool Handshake() { return connected_ && SSL_connect(ssl_.get()) == 1; }
  bool Write(const std::string& data) {
    return SSL_write(ssl_.get(), data.data(), static_cast<int>(data.size())) == static_cast<int>(data.size());
  }
  // One TLS record per string, all leaving in one TCP segment: the server
  // reads them from the socket together.
  bool WriteRecordsTogether(const std::vector<std::string>& records) {
    int on = 1, off = 0;
    setsockopt(fd_, IPPROTO_TCP, TCP_CORK, &on, sizeof on);
    bool ok = true;
    for (const auto& r : records) ok = ok && Write(r);
    setsockopt(fd_, IPPROTO_TCP, TCP_CORK, &off, sizeof off);
    return ok;
  }
  // Reads until `count` complete responses (by Content-Length) have arrived,
  // or the connection ends; returns what was read.
  std::string ReadResponses(int count) {
    std::string got;
    char buf[4096];
    while (Complete(got) < count) {
      const int n = SSL_read(ssl_.get(), buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  }
  static int Complete(const std::string& s) {
    int count = 0;
    size_t pos = 0;
    for (;;) {
      const size_t end = s.find("\r\n\r\n", pos);
      if (end == std::string::npos) return count;
      const size_t cl = s.find("Content-Length: ", pos);
      const size_t len = cl < end ? std::stoul(s.substr(cl + 16)) : 0;
      if (s.size() < end + 4 + len) return count;
      pos = end + 4 + len;
      ++count;
    }
  }

 private:
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx_;
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl_;
  int fd_ = -1;
  bool connected_ = false;
};

}  // namespace ms::webhook
