// One connection of the HTTP server: a stream (stream.h: TLS or plain TCP),
// then HTTP/1.1 (http1.h: every framing rule and timeout), driven by its worker's event
// loop with what the socket is ready for and when its deadline comes. After
// each turn it says what to watch the socket for and when it next needs the
// time; a turn that returns kClose means: close it now.
//
// Per request it costs one read and one write system call: the answer (head
// and body) leaves in one TLS record, nothing polls before reading, and a
// read that comes back short ends the turn (Stream::Drained). The socket is
// watched edge-triggered: epoll then reports connections in the order their
// bytes came, where level-triggered reporting puts the ones answered last
// time first, and that unfairness was the latency tail
// (bench/results/webhook.md). A
// handshake not finished within options.handshake_timeout is dropped; an answer the
// client does not read within the read timeout drops the connection; after
// the last answer on a connection the server closes (a refusal, Connection:
// close) it half-closes and lingers, reading what the client still sends.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "shared/clock/clock.h"
#include "shared/transport/budget.h"
#include "shared/transport/connection_table.h"
#include "shared/transport/http1.h"
#include "shared/transport/stream.h"

namespace spdlog {
class logger;
}

namespace ms::transport {

struct HttpServerOptions;

class ServerConnection {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  enum class Next { kKeep, kClose };

  // What the server's connections share; it outlives them.
  struct Context {
    const HttpServerOptions& options;
    const Connection::Handler& handler;
    const Connection::RefusalHook& on_refusal;
    spdlog::logger& logger;
    const clock::Clock& clock;  // the Date header's wall time
    BodyBudget* bodies;         // the bytes of bodies in flight, shared by the server's connections
  };

  ServerConnection(std::unique_ptr<Stream> stream, const Context& context, TimePoint now);

  // The socket is ready (epoll's `events`): handshake, read, answer, write.
  Next OnReady(std::uint32_t events);
  // Its deadline has come (`now` >= Deadline()).
  Next OnDeadline(TimePoint now);

  // When it next needs the time.
  TimePoint Deadline() const;
  // What to watch the socket for (EPOLLIN, EPOLLOUT, EPOLLRDHUP), always with EPOLLET.
  std::uint32_t Interest() const;
  // The turn ended with the socket not drained while reading it (its
  // options.reads_per_turn spent, or a linger begun): no event will come
  // for what is there, so the loop must drive it again (EventLoop::Activate).
  bool ReadAgain() const { return read_again_; }
  // Nothing in flight: it can go at a drain.
  bool Idle() const;
  // What it is doing, as far as giving way to a new connection goes
  // (connection_table.h).
  Phase phase() const;
  // Requests answered on it so far.
  size_t answered() const { return http_ ? http_->answered() : 0; }
  // Its TLS session may no longer serve (tls_sessions.h): when it is idle
  // it can go now; else its next answer closes it. False: it may serve on.
  bool EndIfSessionInvalid();
  // Before it goes: close_notify when it was established and is not lingering.
  void Close();
  int fd() const { return stream_->fd(); }
  const std::string& remote() const { return stream_->remote(); }

 private:
  bool Handshake();  // false: not established (yet); `closed_` when it failed
  bool Read(bool* failed, int& reads_left);
  bool Flush();
  bool MayRead() const;
  Next AfterTurn(bool failed);
  void StartLinger();
  bool blocked() const { return write_blocked_since_ != TimePoint{}; }

  const Context& context_;
  std::unique_ptr<Stream> stream_;    // TLS or plain
  std::unique_ptr<Connection> http_;  // once the handshake is done
  bool closed_ = false;               // failed: close it
  bool want_write_ = false;           // the socket must become writable
  bool write_wants_read_ = false;     // SSL_write needs to read first (a TLS 1.3 key update)
  bool read_again_ = false;           // see ReadAgain()
  bool peer_shut_ = false;            // EPOLLRDHUP: the client has half-closed
  bool lingering_ = false;            // answered and shut for writing; reading what the client still sends
  size_t linger_budget_ = 0;
  TimePoint deadline_;  // of the handshake, then of the linger
  TimePoint write_blocked_since_{};
};

}  // namespace ms::transport
