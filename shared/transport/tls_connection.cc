#include "shared/transport/tls_connection.h"

#include <openssl/err.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace ms::transport {

namespace {

constexpr std::string_view kPlainHttpAnswer =
    "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    "Client sent an HTTP request to an HTTPS server.\n";

std::string OpenSslError() {
  const unsigned long e = ERR_peek_last_error();
  if (e == 0) return std::strerror(errno);
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

TlsConnection::Io Want(int err) {
  if (err == SSL_ERROR_WANT_READ) return TlsConnection::Io::kWantRead;
  if (err == SSL_ERROR_WANT_WRITE) return TlsConnection::Io::kWantWrite;
  if (err == SSL_ERROR_ZERO_RETURN) return TlsConnection::Io::kClosed;
  return TlsConnection::Io::kFailed;
}

// The socket BIO's callback after each read OpenSSL makes: whether it came
// back short or empty (Stream::Drained). OpenSSL reads ahead, so an SSL_read
// may make one read, several or none; the last one made says.
long NoteRead(BIO* bio, int oper, const char*, size_t len, int, long, int ret, size_t* processed) {
  if (oper == (BIO_CB_READ | BIO_CB_RETURN))
    *reinterpret_cast<bool*>(BIO_get_callback_arg(bio)) = ret <= 0 || processed == nullptr || *processed < len;
  return ret;
}

}  // namespace

TlsConnection::TlsConnection(UniqueFd fd, SSL* ssl, std::string remote)
    : Stream(std::move(fd), std::move(remote)), ssl_(ssl) {
  BIO* socket_bio = SSL_get_rbio(ssl);
  BIO_set_callback_arg(socket_bio, reinterpret_cast<char*>(&drained_));
  BIO_set_callback_ex(socket_bio, NoteRead);
}

std::unique_ptr<TlsConnection> TlsConnection::Accept(UniqueFd fd, SSL_CTX& ctx, std::string remote,
                                                     std::string* error) {
  SSL* ssl = SSL_new(&ctx);
  if (ssl == nullptr || SSL_set_fd(ssl, fd.get()) != 1) {
    *error = "SSL_new: " + OpenSslError();
    ERR_clear_error();
    SSL_free(ssl);
    return nullptr;
  }
  SSL_set_accept_state(ssl);
  return std::unique_ptr<TlsConnection>(new TlsConnection(std::move(fd), ssl, std::move(remote)));
}

TlsConnection::Io TlsConnection::Handshake() {
  ERR_clear_error();
  const int r = SSL_do_handshake(ssl_.get());
  if (r == 1) {
    sessions_ = SessionPolicyOf(SSL_get_SSL_CTX(ssl_.get()));
    if (sessions_) origin_ = sessions_->OriginOf(ssl_.get());
    return Io::kDone;
  }
  const int err = SSL_get_error(ssl_.get(), r);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return Want(err);
  const unsigned long e = ERR_peek_error();
  if (ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_HTTP_REQUEST) {
    [[maybe_unused]] auto n =
        ::send(fd_.get(), kPlainHttpAnswer.data(), kPlainHttpAnswer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    plain_http_ = true;
    failure_ = "plain HTTP request to the HTTPS port";
  } else {
    failure_ = OpenSslError();
  }
  ERR_clear_error();
  return Io::kFailed;
}

bool TlsConnection::SessionValid() const { return !sessions_ || sessions_->Valid(origin_); }

TlsConnection::Io TlsConnection::Read(char* buf, size_t cap, size_t* n) {
  ERR_clear_error();
  const int r = SSL_read(ssl_.get(), buf, static_cast<int>(std::min<size_t>(cap, INT_MAX)));
  if (r > 0) {
    *n = static_cast<size_t>(r);
    return Io::kDone;
  }
  return Want(SSL_get_error(ssl_.get(), r));
}

TlsConnection::Io TlsConnection::Write(std::string& out) {
  while (!out.empty()) {
    ERR_clear_error();
    const int n = SSL_write(ssl_.get(), out.data(), static_cast<int>(std::min<size_t>(out.size(), INT_MAX)));
    if (n <= 0) {
      const Io io = Want(SSL_get_error(ssl_.get(), n));
      return io == Io::kClosed ? Io::kFailed : io;
    }
    out.erase(0, static_cast<size_t>(n));
  }
  return Io::kDone;
}

void TlsConnection::SendCloseNotify() {
  ERR_clear_error();
  SSL_shutdown(ssl_.get());
  ERR_clear_error();
}

}  // namespace ms::transport
