// The server's budgets: connections in total and per peer address (over
// real loopback connections from two addresses), and the bytes of bodies in
// flight (the HTTP connection in virtual time: the exact answer a client
// reads when the budget is spent, and that it is given back).
#include "transport/budget.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spdlog/sinks/null_sink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "test/support/fake_clock.h"
#include "transport/http1.h"
#include "transport/http_server.h"

namespace ms::transport {
namespace {

using namespace std::chrono_literals;

TEST(PeerCounts, CapsTheTotalAndEachPeer) {
  PeerCounts counts(5, 3);
  EXPECT_TRUE(counts.Take("10.0.0.1", 2));
  EXPECT_TRUE(counts.Take("10.0.0.1", 1));
  EXPECT_FALSE(counts.Take("10.0.0.1", 1)) << "the peer's share is used up";
  EXPECT_TRUE(counts.Take("10.0.0.2", 2));
  EXPECT_FALSE(counts.Take("10.0.0.3", 1)) << "the total is used up";
  counts.Give("10.0.0.1", 1);
  EXPECT_TRUE(counts.Take("10.0.0.3", 1));
  EXPECT_EQ(counts.total(), 5u);
}

class BodyBudgetTest : public ::testing::Test {
 protected:
  BodyBudgetTest() {
    limits_.max_body_bytes = 1000;
    clock_.SetWall(std::chrono::system_clock::from_time_t(1741064767));
  }
  std::unique_ptr<Connection> Conn(const std::string& peer) {
    return std::make_unique<Connection>(limits_, handler_, hook_, peer, t0_, clock_, &budget_);
  }
  static std::string Head(size_t length) {
    return "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(length) + "\r\n\r\n";
  }

  Limits limits_;
  BodyBudget budget_{1000};  // one peer: at most 500
  size_t handled_ = 0;
  Connection::Handler handler_ = [this](const Request& r) {
    ++handled_;
    return Response{200, "text/plain", std::to_string(r.body.size()), {}};
  };
  Connection::RefusalHook hook_ = [](const Request&, const Response&) {};
  TimePoint t0_{std::chrono::seconds(1000)};
  FakeClock clock_;
};

TEST_F(BodyBudgetTest, ABodyBeyondTheBudgetIsRefused503WithRetryAfterBeforeItIsRead) {
  auto first = Conn("10.0.0.1");
  first->OnData(Head(400) + std::string(100, 'a'), t0_);  // 400 reserved, 100 received
  EXPECT_EQ(budget_.reserved(), 400u);

  auto second = Conn("10.0.0.1");
  second->OnData(Head(200), t0_);  // 600 from one peer: over its half
  EXPECT_EQ(second->output(),
            "HTTP/1.1 503 Service Unavailable\r\nDate: Tue, 04 Mar 2025 05:06:07 GMT\r\n"
            "Content-Type: text/plain; charset=utf-8\r\nContent-Length: 91\r\nRetry-After: 1\r\n"
            "Connection: close\r\n\r\n"
            "too many request bodies in flight: 200 bytes do not fit in the 1000-byte budget now; retry\n");
  EXPECT_TRUE(second->closing());
  EXPECT_EQ(budget_.reserved(), 400u) << "a refused body reserves nothing";

  auto other_peer = Conn("10.0.0.2");
  other_peer->OnData(Head(200) + std::string(200, 'b'), t0_);
  EXPECT_EQ(other_peer->output().substr(0, 15), "HTTP/1.1 200 OK") << "another peer has its own half";

  first->OnData(std::string(300, 'a'), t0_ + 1ms);
  EXPECT_EQ(handled_, 2u);
  EXPECT_EQ(budget_.reserved(), 0u) << "answered bodies are given back";
  auto third = Conn("10.0.0.1");
  third->OnData(Head(500), t0_ + 2ms);
  EXPECT_EQ(third->output(), "") << "the peer's half is free again: the body is awaited";
  EXPECT_EQ(budget_.reserved(), 500u);
  third.reset();
  EXPECT_EQ(budget_.reserved(), 0u) << "a connection that goes gives its reservation back";
}

TEST_F(BodyBudgetTest, AnUnfinishedBodyIsGivenBackOnTimeoutAndWhenThePeerCloses) {
  limits_.read_timeout = 2s;
  auto timed_out = Conn("10.0.0.1");
  timed_out->OnData(Head(300), t0_);
  auto closed = Conn("10.0.0.2");
  closed->OnData(Head(300) + "abc", t0_);
  EXPECT_EQ(budget_.reserved(), 600u);
  timed_out->OnTimer(t0_ + 2s);
  EXPECT_EQ(timed_out->output().substr(0, 12), "HTTP/1.1 408");
  closed->OnPeerClosed();
  EXPECT_EQ(budget_.reserved(), 0u);
}

TEST_F(BodyBudgetTest, ALargeRequestLeavesNoLargeBuffersOnAnIdleConnection) {
  auto conn = Conn("10.0.0.1");
  conn->OnData(Head(500), t0_);
  for (int i = 0; i < 50; ++i) conn->OnData(std::string(10, 'x'), t0_);
  ASSERT_EQ(handled_, 1u);
  conn->output().clear();  // sent
  conn->ReleaseBuffers();
  EXPECT_LT(conn->buffer_capacity(), 16u * 1024 + 64);
  EXPECT_TRUE(conn->idle());
}

// A blocking TCP connection from `source` (a loopback address) to 127.0.0.1:port.
int ConnectFrom(const char* source, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval tv{60, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  inet_pton(AF_INET, source, &from.sin_addr);
  bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to);
  return fd;
}

// The first bytes the server sends on `fd` after a GET ("" when it closed
// the connection without an answer).
std::string Get(int fd) {
  const std::string request = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  char buf[12] = {};
  const ssize_t n = recv(fd, buf, sizeof buf, MSG_WAITALL);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

TEST(ConnectionBudget, NewConnectionsBeyondThePeersShareOrTheTotalAreClosedAtOnce) {
  HttpServerOptions options;
  options.host = "127.0.0.1";
  options.threads = 1;
  options.max_connections = 3;
  options.max_connections_per_peer = 2;
  HttpServer server(
      options, nullptr,
      [](const Request&) {
        return Response{200, "text/plain", "ok", {}};
      },
      nullptr, std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>()));
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  std::vector<int> fds;
  for (const char* from : {"127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.3"})
    fds.push_back(ConnectFrom(from, server.port()));
  EXPECT_EQ(Get(fds[0]), "HTTP/1.1 200");
  EXPECT_EQ(Get(fds[1]), "HTTP/1.1 200");
  EXPECT_EQ(Get(fds[2]), "") << "a third connection from one address";
  EXPECT_EQ(Get(fds[3]), "HTTP/1.1 200") << "another address has its own share";
  EXPECT_EQ(Get(fds[4]), "") << "over the total";
  close(fds[0]);
  // Once the server has seen the close, a connection from 127.0.0.3 fits.
  int again = -1;
  std::string answer;
  for (int i = 0; i < 1000 && answer.empty(); ++i) {
    if (again >= 0) close(again);
    again = ConnectFrom("127.0.0.3", server.port());
    answer = Get(again);
  }
  EXPECT_EQ(answer, "HTTP/1.1 200");
  for (int fd : fds) close(fd);
  close(again);
  server.Stop();
}

}  // namespace
}  // namespace ms::transport
