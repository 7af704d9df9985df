// One worker of the HTTP server (http_server.h): an event loop on a thread
// of its own, the connections it owns (TLS or plain TCP, then HTTP/1.1 as
// http1::Connection), and its share of accepting from the listener. Each
// connection has one timer, armed at its next deadline (handshake, request
// or idle timeout, an answer the client does not read, the linger), so the
// loop sleeps until something happens.
#pragma once

#include <netinet/in.h>
#include <openssl/ssl.h>
#include <spdlog/logger.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "shared/clock/clock.h"
#include "shared/transport/budget.h"
#include "shared/transport/event_loop.h"
#include "shared/transport/http1.h"
#include "shared/transport/listener.h"
#include "shared/transport/server_connection.h"

namespace ms::transport {

struct HttpServerOptions;
class Worker;

// What the workers of one server share.
struct ServerShared {
  ServerShared(ServerConnection::Context context, SSL_CTX* ssl_ctx, const Listener& listening, ConnectionLimits limits)
      : connections(context), ctx(ssl_ctx), listener(listening), table(limits) {}
  ServerConnection::Context connections;
  SSL_CTX* ctx;  // nullptr: plain HTTP
  const Listener& listener;
  std::vector<std::unique_ptr<Worker>> workers;
  ConnectionTable table;                  // open connections: who holds them, which gives way
  std::atomic<std::uint64_t> next_id{1};  // connection tags: never reused, unlike fds
  std::atomic<bool> stopping{false};
};

class Worker {
 public:
  // The worker at `index` in shared.workers.
  Worker(ServerShared& shared, int index);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // The loop, watching the listener.
  bool Init(std::string* error);
  // The thread's body: returns once drained.
  void Run();
  // A connection another worker accepted for this one (thread-safe).
  void Hand(UniqueFd fd, ConnectionTable::SlotPtr slot);
  // Closes the connection `id` (its place is given to a new one) as soon as
  // it is owed no answer (thread-safe).
  void Evict(std::uint64_t id);
  // Ends the connections whose TLS session may no longer serve: the idle
  // ones now, the others after their next answer (thread-safe).
  void EndInvalidSessions();
  // Stops accepting, closes idle connections, answers requests still
  // arriving (up to the read timeout), then ends Run() (thread-safe).
  void Drain();
  // Connections owned or handed to this worker.
  size_t load() const { return load_.load(); }

 private:
  struct Conn;
  using Conns = std::unordered_map<uint64_t, std::unique_ptr<Conn>>;

  void OnIo(uint64_t tag, uint32_t events);
  void Accept();
  void PauseAccepting();
  void ResumeAccepting();
  void Adopt(UniqueFd fd, ConnectionTable::SlotPtr slot);
  void EvictNow(std::uint64_t id);
  // Says (at most every 10 s, else at debug) why connections are refused
  // or give way to new ones.
  void WarnRefused(const std::string& peer, const std::string& why);
  void WarnEvicted(const ConnectionTable::Slot& victim, const std::string& peer, const std::string& why);
  void Close(Conns::iterator it);
  void BeginDrain();
  void DrainStep();  // closes what is idle; ends Run() once nothing is left

  void Drive(Conns::iterator it, uint32_t events);
  void OnTimer(uint64_t id);
  // After a connection's turn: close it, or watch its socket and arm its timer.
  void Settle(Conns::iterator it, ServerConnection::Next next);

  ServerShared& shared_;
  const int index_;
  EventLoop loop_;
  Conns conns_;
  std::atomic<size_t> load_{0};
  bool accepting_ = true;
  bool draining_ = false;
  EventLoop::Timer accept_resume_;
  EventLoop::Timer drain_deadline_;
  EventLoop::TimePoint next_accept_warning_{};
  EventLoop::TimePoint next_evict_warning_{};
  size_t refused_since_warning_ = 0;
  size_t evicted_since_warning_ = 0;
};

}  // namespace ms::transport
