// ServerConnection as its loop drives it, over a real socketpair with a
// stream that counts the reads it is asked for: one request costs one read
// (a short read with nothing read ahead ends the turn, no read() is spent to
// learn that the socket is empty), what comes later is read on the next
// turn, and, epoll being edge-triggered, a turn never leaves bytes in the
// socket without asking to be driven again.
#include "shared/transport/server_connection.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "shared/transport/http_server.h"
#include "shared/transport/plain_connection.h"
#include "test/support/fake_clock.h"

namespace ms::transport {
namespace {

// A plain TCP stream (PlainConnection on the same socket) that counts the
// reads the connection asks for.
class CountingStream : public Stream {
 public:
  CountingStream(UniqueFd fd, int* reads)
      : Stream(UniqueFd(dup(fd.get())), "192.0.2.1"), inner_(std::move(fd), "192.0.2.1"), reads_(reads) {}
  Io Handshake() override { return inner_.Handshake(); }
  Io Read(char* buf, size_t cap, size_t* n) override {
    ++*reads_;
    const Io io = inner_.Read(buf, cap, n);
    drained_ = inner_.Drained();
    return io;
  }
  Io Write(std::string& out) override { return inner_.Write(out); }
  bool HasPending() const override { return inner_.HasPending(); }
  void SendCloseNotify() override { inner_.SendCloseNotify(); }

 private:
  PlainConnection inner_;
  int* reads_;
};

class ServerConnectionTest : public ::testing::Test {
 protected:
  ServerConnectionTest() {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
    client_ = UniqueFd(fds[1]);
    conn_ = std::make_unique<ServerConnection>(std::make_unique<CountingStream>(UniqueFd(fds[0]), &reads_), context_,
                                               std::chrono::steady_clock::now());
  }

  void Send(const std::string& bytes) {
    ASSERT_EQ(send(client_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  }
  std::string Received() {
    std::string out;
    char buf[64 * 1024];
    for (ssize_t n; (n = recv(client_.get(), buf, sizeof buf, MSG_DONTWAIT)) > 0;)
      out.append(buf, static_cast<size_t>(n));
    return out;
  }

  HttpServerOptions options_;
  Connection::Handler handler_ = [](const Request& r) {
    return Response{200, "text/plain", "got " + std::to_string(r.body.size()), {}};
  };
  Connection::RefusalHook on_refusal_ = [](const Request&, const Response&) {};
  std::shared_ptr<spdlog::logger> logger_ =
      std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  FakeClock clock_;
  BodyBudget bodies_{0, 0};
  ServerConnection::Context context_{options_, handler_, on_refusal_, *logger_, clock_, &bodies_};
  UniqueFd client_;
  int reads_ = 0;
  std::unique_ptr<ServerConnection> conn_;
};

std::string Post(size_t body_bytes) {
  return "POST /validate HTTP/1.1\r\nHost: h\r\nContent-Length: " + std::to_string(body_bytes) + "\r\n\r\n" +
         std::string(body_bytes, 'b');
}

TEST_F(ServerConnectionTest, OneRequestCostsOneRead) {
  for (int i = 1; i <= 3; ++i) {
    Send(Post(1800));
    ASSERT_EQ(conn_->OnReady(EPOLLIN), ServerConnection::Next::kKeep);
    EXPECT_EQ(reads_, i);
    const std::string got = Received();
    EXPECT_EQ(got.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << got;
    EXPECT_NE(got.find("got 1800"), std::string::npos) << got;
  }
}

// A request in two sends, the loop woken between them: the first turn reads
// the head and stops; the second reads the rest and answers.
TEST_F(ServerConnectionTest, TheRestOfARequestIsReadOnTheNextTurn) {
  const std::string request = Post(1000);
  Send(request.substr(0, 100));
  ASSERT_EQ(conn_->OnReady(EPOLLIN), ServerConnection::Next::kKeep);
  EXPECT_EQ(reads_, 1);
  EXPECT_EQ(Received(), "");
  Send(request.substr(100));
  ASSERT_EQ(conn_->OnReady(EPOLLIN), ServerConnection::Next::kKeep);
  EXPECT_EQ(reads_, 2);
  EXPECT_NE(Received().find("got 1000"), std::string::npos);
}

// A read that fills the buffer does not end the turn: the socket may hold
// more, and it is read on until a short read.
TEST_F(ServerConnectionTest, AFullReadIsFollowedByAnother) {
  Send(Post(40 * 1024));
  ASSERT_EQ(conn_->OnReady(EPOLLIN), ServerConnection::Next::kKeep);
  EXPECT_GE(reads_, 3);  // 16 KiB at a time
  EXPECT_NE(Received().find("got 40960"), std::string::npos);
}

// A turn makes at most options.reads_per_turn reads; when it stops with the
// socket not drained it says so (ReadAgain), since no edge will report what
// is left, and the next turns read the rest.
TEST_F(ServerConnectionTest, ATurnStopsAfterItsReadsAndAsksToBeDrivenAgain) {
  options_.reads_per_turn = 1;
  Send(Post(40 * 1024));
  ASSERT_EQ(conn_->OnReady(EPOLLIN), ServerConnection::Next::kKeep);
  EXPECT_EQ(reads_, 1);
  EXPECT_TRUE(conn_->ReadAgain());
  EXPECT_EQ(Received(), "");
  int turns = 1;
  while (conn_->ReadAgain() && turns < 10) {
    ASSERT_EQ(conn_->OnReady(EPOLLIN), ServerConnection::Next::kKeep);
    ++turns;
  }
  EXPECT_EQ(turns, 3);  // 16 KiB a read
  EXPECT_EQ(reads_, 3);
  EXPECT_NE(Received().find("got 40960"), std::string::npos);
}

// The client's half-close comes after its request's bytes: the short read
// that returns them does not end the turn when epoll said EPOLLRDHUP, the
// end of the stream is read too (no edge would report it), and the
// connection answers, then closes.
TEST_F(ServerConnectionTest, AHalfCloseAfterARequestIsReadInTheSameTurn) {
  Send(Post(100));
  ASSERT_EQ(shutdown(client_.get(), SHUT_WR), 0);
  const ServerConnection::Next next = conn_->OnReady(EPOLLIN | EPOLLRDHUP);
  EXPECT_EQ(reads_, 2);
  EXPECT_NE(Received().find("got 100"), std::string::npos);
  if (next == ServerConnection::Next::kKeep) {
    // Lingering, which starts at once: what the client sent is read then.
    EXPECT_TRUE(conn_->ReadAgain());
    EXPECT_EQ(conn_->OnReady(EPOLLIN), ServerConnection::Next::kClose);
  }
}

}  // namespace
}  // namespace ms::transport
