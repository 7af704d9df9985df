// Plain-HTTP side endpoints of both programs: /healthz and /readyz on the
// probe address, /metrics on the metrics address (design.md §4).
#pragma once

#include <httplib.h>
#include <spdlog/logger.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "shared/metrics.h"

namespace ms {

// Binds `server` to host:port (port 0: any free port) and runs
// listen_after_bind() on `thread`. Returns the bound port, or -1 with `error`
// set when the address cannot be bound.
int BindAndServe(httplib::Server& server, const std::string& host, int port, std::thread& thread, std::string* error);
// Stops a server started by BindAndServe: closes the listener, lets requests
// in flight finish and joins `thread`. A no-op when it was not started.
void StopServing(httplib::Server& server, std::thread& thread);

class EndpointServer {
 public:
  explicit EndpointServer(std::shared_ptr<spdlog::logger> logger);
  ~EndpointServer();
  EndpointServer(const EndpointServer&) = delete;
  EndpointServer& operator=(const EndpointServer&) = delete;

  // /healthz answers 200 "ok" while `healthy()` is true; /readyz 200 "ok"
  // while `ready()` is true, else 503 with the reason.
  void ServeProbes(std::function<bool()> healthy, std::function<bool(std::string*)> ready);
  // /metrics in the Prometheus text format 0.0.4.
  void ServeMetrics(const metrics::Registry& registry);

  // Binds and starts serving on a thread. Returns false (and the error) when
  // the address cannot be bound. Port 0 picks a free port (see port()).
  bool Start(const std::string& host, int port, std::string* error);
  int port() const { return port_; }
  void Stop();

 private:
  std::shared_ptr<spdlog::logger> logger_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = -1;
};

}  // namespace ms
