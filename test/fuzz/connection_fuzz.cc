// libFuzzer: one server connection at the connection level, as the server's
// loop drives it (transport/server_connection.h over a real socket, a
// socketpair, with its plain stream, http1::Connection and the body budget):
// the input is a script of what the client does (send bytes, half-close,
// read; send while the loop is busy elsewhere, so that several sends come
// to one turn) and what the loop does (the socket is readable or writable,
// the deadline has come). Besides the sanitizers' findings, it checks what the
// client reads: a sequence of complete, well-formed answers, one per request
// handled or refused, and nothing after the connection's end; that the
// body budget is given back in full once the connection is gone; and the
// contract of an edge-triggered loop: a turn after which the connection
// still reads, with the same interest as before (no EPOLL_CTL_MOD that would
// report the socket anew), leaves no byte in the socket unless it asks to be
// driven again (ReadAgain, which the loop does here as the worker does).
#include <fuzzer/FuzzedDataProvider.h>
#include <spdlog/sinks/null_sink.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "shared/transport/http_server.h"
#include "shared/transport/plain_connection.h"
#include "shared/transport/server_connection.h"
#include "test/support/fake_clock.h"

namespace {

using namespace ms::transport;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

// Consumes one whole answer from the front of `out`; false when `out` holds
// only the start of one (the server's writes stopped there).
bool TakeAnswer(std::string& out, bool head_request) {
  while (out.rfind("HTTP/1.1 100 Continue\r\n\r\n", 0) == 0) out.erase(0, 25);
  if (out.size() < 9) {
    Check(std::string_view("HTTP/1.1 ").substr(0, out.size()) == out, "an answer starts with its status line");
    return false;
  }
  Check(out.rfind("HTTP/1.1 ", 0) == 0, "an answer starts with its status line");
  const size_t end = out.find("\r\n\r\n");
  if (end == std::string::npos) return false;
  const std::string head = out.substr(0, end + 2);
  const size_t cl = head.find("\r\nContent-Length: ");
  Check(cl != std::string::npos, "an answer has a Content-Length");
  Check(head.find("\r\nDate: ") != std::string::npos, "an answer has a Date");
  const size_t total = end + 4 + (head_request ? 0 : std::strtoul(head.c_str() + cl + 18, nullptr, 10));
  if (out.size() < total) return false;
  out.erase(0, total);
  return true;
}

// What the client can read now.
void Drain(int fd, std::string& into) {
  char buf[16 * 1024];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0;) into.append(buf, static_cast<size_t>(n));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  HttpServerOptions options;
  options.limits.max_header_bytes = in.ConsumeIntegralInRange<size_t>(16, 2048);
  options.limits.max_headers = in.ConsumeIntegralInRange<size_t>(1, 20);
  options.limits.max_body_bytes = in.ConsumeIntegralInRange<size_t>(0, 4096);
  options.limits.read_timeout = std::chrono::milliseconds(in.ConsumeIntegralInRange<int>(1, 10000));
  options.limits.idle_timeout = std::chrono::milliseconds(in.ConsumeIntegralInRange<int>(1, 30000));
  options.max_queued_output = in.ConsumeIntegralInRange<size_t>(1, 8192);
  options.reads_per_turn = 1 + static_cast<int>(options.max_queued_output % 3);  // no input of its own
  BodyBudget bodies(in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<size_t>(1, 8192), 0);

  std::vector<bool> head_requests;  // per answer, in order
  size_t refused = 0;
  Connection::Handler handler = [&](const Request& r) {
    head_requests.push_back(r.method == "HEAD");
    return Response{
        200 + static_cast<int>(r.body.size() % 3), "text/plain", std::string(r.body.size() % 5000, 'x'), {}};
  };
  Connection::RefusalHook hook = [&](const Request& r, const Response&) {
    ++refused;
    head_requests.push_back(r.method == "HEAD");
  };
  auto logger = std::make_shared<spdlog::logger>("fuzz", std::make_shared<spdlog::sinks::null_sink_mt>());
  ms::FakeClock clock;
  const ServerConnection::Context context{options, handler, hook, *logger, clock, &bodies};

  int fds[2];
  Check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0, "socketpair");
  const int client = fds[1];
  auto conn = std::make_unique<ServerConnection>(std::make_unique<PlainConnection>(UniqueFd(fds[0]), "192.0.2.1"),
                                                 context, std::chrono::steady_clock::now());
  std::string received;
  bool closed = false, half_closed = false;
  std::uint32_t interest = conn->Interest();  // as the worker adds it
  bool edge = false;                          // bytes sent that no turn has been told of
  while (!closed && in.remaining_bytes() > 0) {
    ServerConnection::Next next = ServerConnection::Next::kKeep;
    bool turn = true;
    switch (in.ConsumeIntegralInRange<int>(0, 5)) {
      case 0: {
        const std::string chunk = in.ConsumeRandomLengthString(1024);
        if (!half_closed) [[maybe_unused]]
          auto n = send(client, chunk.data(), chunk.size(), MSG_NOSIGNAL);
        next = conn->OnReady(EPOLLIN);
        edge = false;
        break;
      }
      case 1:
        next = conn->OnReady(edge ? EPOLLIN | EPOLLOUT : EPOLLOUT);
        edge = false;
        break;
      case 2:
        shutdown(client, SHUT_WR);
        half_closed = true;
        next = conn->OnReady(EPOLLIN | EPOLLRDHUP);
        edge = false;
        break;
      case 5: {  // the bytes' edge is reported to a later turn; repeated, beyond a turn's reads
        const int times = in.ConsumeIntegralInRange<int>(1, 64);
        const std::string chunk = in.ConsumeRandomLengthString(1024);
        for (int i = 0; i < times && !half_closed; ++i)
          [[maybe_unused]] auto n = send(client, chunk.data(), chunk.size(), MSG_NOSIGNAL);
        edge = true;
        turn = false;
        break;
      }
      case 3:
        next = conn->OnDeadline(conn->Deadline());
        break;
      default:
        Drain(client, received);
        turn = false;
        break;
    }
    closed = next == ServerConnection::Next::kClose;
    if (closed || !turn) continue;
    for (int again = 0; !closed && conn->ReadAgain(); ++again) {
      Check(again < 1000, "a connection asks to be driven again without end");
      closed = conn->OnReady(EPOLLIN) == ServerConnection::Next::kClose;
    }
    if (closed) continue;
    const std::uint32_t now_interest = conn->Interest();
    if (!edge && (now_interest & EPOLLIN) != 0 && (interest & EPOLLIN) != 0) {
      char c;
      Check(recv(conn->fd(), &c, 1, MSG_PEEK | MSG_DONTWAIT) <= 0,
            "a turn leaves no byte in the socket unless it asks to be driven again");
    }
    interest = now_interest;
  }
  if (!closed) conn->Close();
  conn.reset();
  Check(bodies.reserved() == 0, "the body budget is given back once the connection is gone");
  Drain(client, received);
  close(client);
  // What the client read: whole answers, in order, one per request handled
  // or refused; only the last may be cut short (where the server's writes
  // stopped when the connection went).
  size_t answers = 0;
  while (!received.empty() && received != "HTTP/1.1 100 Continue\r\n\r\n") {
    Check(answers < head_requests.size(), "no answer without a request");
    if (!TakeAnswer(received, head_requests[answers++])) break;
  }
  Check(refused <= 1, "at most one refusal");
  return 0;
}
