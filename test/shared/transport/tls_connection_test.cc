// TlsConnection's Drained() over a real socketpair and a real TLS 1.3
// session: it says whether the last read OpenSSL made from the socket came
// back short (the socket was drained), which the edge-triggered loop relies
// on to end a turn without a read() that says EAGAIN.
#include "shared/transport/tls_connection.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <chrono>
#include <memory>
#include <string>

#include "shared/certs/x509.h"

namespace ms::transport {
namespace {

using namespace std::chrono_literals;

struct CtxDeleter {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
struct SslDeleter {
  void operator()(SSL* s) const { SSL_free(s); }
};

// A server context with a self-signed certificate, reading ahead as the server's does.
std::unique_ptr<SSL_CTX, CtxDeleter> ServerContext() {
  const std::string key = certs::NewPrivateKey();
  const auto now = std::chrono::system_clock::now();
  const std::string cert = certs::Issue({"localhost", {"localhost"}, false, now - 1h, now + 1h}, key, nullptr);
  std::unique_ptr<SSL_CTX, CtxDeleter> ctx(SSL_CTX_new(TLS_server_method()));
  BIO* cb = BIO_new_mem_buf(cert.data(), static_cast<int>(cert.size()));
  BIO* kb = BIO_new_mem_buf(key.data(), static_cast<int>(key.size()));
  X509* x = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
  EVP_PKEY* k = PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr);
  EXPECT_EQ(SSL_CTX_use_certificate(ctx.get(), x), 1);
  EXPECT_EQ(SSL_CTX_use_PrivateKey(ctx.get(), k), 1);
  X509_free(x);
  EVP_PKEY_free(k);
  BIO_free(cb);
  BIO_free(kb);
  SSL_CTX_set_read_ahead(ctx.get(), 1);
  return ctx;
}

class TlsConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
    client_fd_ = UniqueFd(fds[1]);
    std::string error;
    server_ = TlsConnection::Accept(UniqueFd(fds[0]), *server_ctx_, "192.0.2.1", &error);
    ASSERT_NE(server_, nullptr) << error;
    client_.reset(SSL_new(client_ctx_.get()));
    SSL_set_fd(client_.get(), client_fd_.get());
    SSL_set_connect_state(client_.get());
    // Both ends non-blocking on one thread: take turns until both are done.
    bool server_done = false, client_done = false;
    for (int i = 0; i < 100 && !(server_done && client_done); ++i) {
      if (!client_done) client_done = SSL_do_handshake(client_.get()) == 1;
      if (!server_done) {
        const Stream::Io io = server_->Handshake();
        ASSERT_NE(io, Stream::Io::kFailed) << server_->failure();
        server_done = io == Stream::Io::kDone;
      }
    }
    ASSERT_TRUE(server_done && client_done);
  }

  // The client sends `bytes` in records of at most 16 KiB (TLS's largest).
  void Send(const std::string& bytes) {
    ASSERT_EQ(SSL_write(client_.get(), bytes.data(), static_cast<int>(bytes.size())), static_cast<int>(bytes.size()));
  }

  std::unique_ptr<SSL_CTX, CtxDeleter> server_ctx_ = ServerContext();
  std::unique_ptr<SSL_CTX, CtxDeleter> client_ctx_{SSL_CTX_new(TLS_client_method())};
  UniqueFd client_fd_;
  std::unique_ptr<TlsConnection> server_;
  std::unique_ptr<SSL, SslDeleter> client_;
};

TEST_F(TlsConnectionTest, AShortReadFromTheSocketSaysItIsDrained) {
  Send(std::string(100, 'a'));
  char buf[16 * 1024];
  size_t n = 0;
  ASSERT_EQ(server_->Read(buf, sizeof buf, &n), Stream::Io::kDone);
  EXPECT_EQ(n, 100u);
  EXPECT_TRUE(server_->Drained());
  EXPECT_FALSE(server_->HasPending());
}

// 48 KiB in the socket: OpenSSL's first read fills its buffer (about 17 KiB)
// and leaves the rest in the socket, so it is not drained until a read
// comes back short; every byte is read by then.
TEST_F(TlsConnectionTest, AReadThatFillsOpenSslsBufferIsNotDrained) {
  Send(std::string(48 * 1024, 'b'));
  char buf[16 * 1024];
  size_t n = 0, total = 0;
  ASSERT_EQ(server_->Read(buf, sizeof buf, &n), Stream::Io::kDone);
  total += n;
  EXPECT_FALSE(server_->Drained());
  int reads = 1;
  while (!(server_->Drained() && !server_->HasPending()) && reads < 10) {
    ASSERT_EQ(server_->Read(buf, sizeof buf, &n), Stream::Io::kDone);
    total += n;
    ++reads;
  }
  EXPECT_EQ(total, 48u * 1024);
  EXPECT_TRUE(server_->Drained());
  EXPECT_EQ(server_->Read(buf, sizeof buf, &n), Stream::Io::kWantRead);  // and indeed nothing is left
}

// What the socket no longer has but OpenSSL read ahead is HasPending(),
// not a reason to call the socket undrained: the two are asked together.
TEST_F(TlsConnectionTest, RecordsReadAheadArePendingNotUndrained) {
  Send(std::string(100, 'c'));
  Send(std::string(100, 'd'));
  char buf[64];
  size_t n = 0;
  ASSERT_EQ(server_->Read(buf, sizeof buf, &n), Stream::Io::kDone);
  EXPECT_EQ(n, 64u);
  EXPECT_TRUE(server_->Drained());
  EXPECT_TRUE(server_->HasPending());
}

}  // namespace
}  // namespace ms::transport
