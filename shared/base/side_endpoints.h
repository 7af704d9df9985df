// Plain-HTTP side endpoints of both programs: /healthz and /readyz on the
// probe address, /metrics on the metrics address (design.md §4).
#pragma once

#include <httplib.h>
#include <spdlog/logger.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/flags.h"
#include "base/metrics.h"

namespace ms {

class EndpointServer {
 public:
  explicit EndpointServer(std::shared_ptr<spdlog::logger> logger);
  ~EndpointServer();
  EndpointServer(const EndpointServer&) = delete;
  EndpointServer& operator=(const EndpointServer&) = delete;

  // /healthz answers 200 "ok" while `healthy()` is true; /readyz 200 "ok"
  // while `ready()` is true, else 503 with the reason.
  void ServeProbes(std::function<bool()> healthy, std::function<bool(std::string*)> ready);
  // /metrics in the Prometheus text format 0.0.4: what `collectables` hold
  // (a prometheus::Registry, the process collector), in that order. They
  // must outlive the server.
  void ServeMetrics(std::vector<const prometheus::Collectable*> collectables);

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

// A program's side endpoints: /metrics on the metrics address and the probes
// on the probe address, or all three on one server when the two addresses
// are the same; a disabled address ("0", port -1) serves nothing.
class SideEndpoints {
 public:
  explicit SideEndpoints(std::shared_ptr<spdlog::logger> logger);
  // False, with an error naming the endpoint, when an address cannot be bound.
  // `registry` must outlive the endpoints.
  bool Start(const HostPort& metrics_address, const HostPort& probe_address, const metrics::Registry& registry,
             std::function<bool()> healthy, std::function<bool(std::string*)> ready, std::string* error);
  void Stop();
  int metrics_port() const { return metrics_.port(); }
  int probe_port() const { return shared_ ? metrics_.port() : probes_.port(); }

 private:
  EndpointServer metrics_, probes_;
  bool shared_ = false;
};

}  // namespace ms
