#include "shared/http_endpoints.h"

namespace ms {

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

void EndpointServer::ServeMetrics(const metrics::Registry& registry) {
  server_.Get("/metrics", [&registry](const httplib::Request&, httplib::Response& res) {
    res.set_content(registry.Serialize(), metrics::kContentType);
  });
}

bool EndpointServer::Start(const std::string& host, int port, std::string* error) {
  if (port == 0) {
    port_ = server_.bind_to_any_port(host);
    if (port_ < 0) {
      if (error) *error = "cannot bind " + host + ":0";
      return false;
    }
  } else {
    if (!server_.bind_to_port(host, port)) {
      if (error) *error = "cannot bind " + host + ":" + std::to_string(port);
      return false;
    }
    port_ = port;
  }
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  return true;
}

void EndpointServer::Stop() {
  if (thread_.joinable()) {
    server_.stop();
    thread_.join();
  }
}

}  // namespace ms
