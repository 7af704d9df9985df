// A plain HTTP server on 127.0.0.1 with an ephemeral port, for tests of the
// API client and what uses it: add handlers to `server`, then Start().
#pragma once

#include <httplib.h>

#include <atomic>
#include <string>
#include <thread>

#include "test/support/notification.h"

namespace ms::test {

// Runs `server` on a thread of its own, from a port it is already bound to;
// returns once its accept loop runs (httplib's stop() does nothing before
// that). The loop makes its task queue first thing: `server.new_task_queue`
// is wrapped to say so.
inline std::thread ServeInBackground(httplib::Server& server, int threads = 32) {
  auto running = std::make_shared<Notification>();
  server.new_task_queue = [running, threads] {
    running->Notify();
    return new httplib::ThreadPool(threads);  // httplib's own ownership contract
  };
  std::thread t([&server] { server.listen_after_bind(); });
  running->Wait();
  return t;
}

class HttpTestServer {
 public:
  HttpTestServer() {
    server.set_keep_alive_max_count(1000);
    server.set_tcp_nodelay(true);
  }
  void Start() {
    port = server.bind_to_any_port("127.0.0.1");
    thread = ServeInBackground(server);
  }
  // Stops listening and waits for the handlers that are running (httplib
  // joins its workers): call it before anything the handlers use goes away.
  void Stop() {
    done = true;
    stopping.Notify();
    server.stop();
    if (thread.joinable()) thread.join();
  }
  ~HttpTestServer() { Stop(); }
  HttpTestServer(const HttpTestServer&) = delete;
  HttpTestServer& operator=(const HttpTestServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }

  httplib::Server server;
  std::atomic<bool> done{false};  // set first thing by Stop()
  Notification stopping;          // notified first thing by Stop(): slow handlers wait on it
  int port = 0;
  std::thread thread;
};

}  // namespace ms::test
