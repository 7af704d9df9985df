// A plain HTTP server on 127.0.0.1 with an ephemeral port, for tests of the
// API client and what uses it: add handlers to `server`, then Start().
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace ms::test {

class HttpTestServer {
 public:
  HttpTestServer() {
    server.new_task_queue = [] { return new httplib::ThreadPool(32); };  // httplib's own ownership contract
    server.set_keep_alive_max_count(1000);
    server.set_tcp_nodelay(true);
  }
  void Start() {
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
    // The port accepts connections from here on (listen() is done); the wait
    // is for stop() on destruction, which does nothing before the loop runs.
    for (int i = 0; i < 5000 && !server.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Stops listening and waits for the handlers that are running (httplib
  // joins its workers): call it before anything the handlers use goes away.
  void Stop() {
    done = true;
    server.stop();
    if (thread.joinable()) thread.join();
  }
  ~HttpTestServer() { Stop(); }
  HttpTestServer(const HttpTestServer&) = delete;
  HttpTestServer& operator=(const HttpTestServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }

  httplib::Server server;
  std::atomic<bool> done{false};  // set first thing by Stop(): slow handlers may watch it
  int port = 0;
  std::thread thread;
};

}  // namespace ms::test
