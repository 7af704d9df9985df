#include "base/side_endpoints.h"

namespace ms {

namespace {

// Binds `server` to host:port (port 0: any free port) and runs
// listen_after_bind() on `thread`. Returns the bound port, or -1 with `error`
// set when the address cannot be bound.
int BindAndServe(httplib::Server& server, const std::string& host, int port, std::thread& thread, std::string* error) {
  const int bound = port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound < 0) {
    if (error) *error = "cannot bind " + host + ":" + std::to_string(port);
    return -1;
  }
  thread = std::thread([&server] { server.listen_after_bind(); });
  return bound;
}

// Closes the listener, lets requests in flight finish and joins `thread`;
// a no-op when the server was not started.
void StopServing(httplib::Server& server, std::thread& thread) {
  if (thread.joinable()) {
    server.stop();
    thread.join();
  }
}

}  // namespace

EndpointServer::EndpointServer(std::shared_ptr<spdlog::logger> logger) : logger_(std::move(logger)) {
  server_.set_tcp_nodelay(true);
  server_.set_read_timeout(5, 0);
  server_.set_write_timeout(5, 0);
  server_.set_payload_max_length(64 * 1024);
  // Side endpoints get few clients: a small pool.
  server_.new_task_queue = [] { return new httplib::ThreadPool(2); };  // owned by httplib
}

EndpointServer::~EndpointServer() { Stop(); }

void EndpointServer::ServeProbes(std::function<bool()> healthy, std::function<bool(std::string*)> ready) {
  server_.Get("/healthz", [healthy](const httplib::Request&, httplib::Response& res) {
    if (healthy()) {
      res.set_content("ok\n", "text/plain");
    } else {
      res.status = 503;
      res.set_content("unhealthy\n", "text/plain");
    }
  });
  server_.Get("/readyz", [ready](const httplib::Request&, httplib::Response& res) {
    std::string why;
    if (ready(&why)) {
      res.set_content("ok\n", "text/plain");
    } else {
      res.status = 503;
      res.set_content("not ready: " + why + "\n", "text/plain");
    }
  });
}

void EndpointServer::ServeMetrics(std::vector<const prometheus::Collectable*> collectables) {
  server_.Get("/metrics", [collectables = std::move(collectables)](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics::Serialize(collectables), metrics::kContentType);
  });
}

bool EndpointServer::Start(const std::string& host, int port, std::string* error) {
  port_ = BindAndServe(server_, host, port, thread_, error);
  return port_ >= 0;
}

void EndpointServer::Stop() { StopServing(server_, thread_); }

SideEndpoints::SideEndpoints(std::shared_ptr<spdlog::logger> logger) : metrics_(logger), probes_(logger) {}

bool SideEndpoints::Start(const HostPort& metrics_address, const HostPort& probe_address,
                          const metrics::Registry& registry, std::function<bool()> healthy,
                          std::function<bool(std::string*)> ready, std::string* error) {
  shared_ = metrics_address.port >= 0 && metrics_address.host == probe_address.host &&
            metrics_address.port == probe_address.port;
  std::string why;
  if (metrics_address.port >= 0) {
    metrics_.ServeMetrics(registry.Collectables());
    if (shared_) metrics_.ServeProbes(healthy, ready);
    if (!metrics_.Start(metrics_address.host, metrics_address.port, &why)) {
      if (error) *error = "metrics endpoint: " + why;
      return false;
    }
  }
  if (probe_address.port >= 0 && !shared_) {
    probes_.ServeProbes(std::move(healthy), std::move(ready));
    if (!probes_.Start(probe_address.host, probe_address.port, &why)) {
      if (error) *error = "probe endpoint: " + why;
      metrics_.Stop();
      return false;
    }
  }
  return true;
}

void SideEndpoints::Stop() {
  probes_.Stop();
  metrics_.Stop();
}

}  // namespace ms
