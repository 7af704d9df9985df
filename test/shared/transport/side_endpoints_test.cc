// The side endpoints over real loopback HTTP: /metrics with the text
// format's Content-Type, the probes, and one server when the addresses match;
// probes answered while slow clients hold connections, and hostile requests
// refused before they are read.
#include "shared/transport/side_endpoints.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <spdlog/sinks/null_sink.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <vector>

#include "shared/metrics/metrics.h"
#include "shared/transport/unique_fd.h"
#include "test/support/gunzip.h"

namespace ms::transport {
namespace {

std::shared_ptr<spdlog::logger> NullLogger() {
  return std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
}

// A blocking TCP connection to 127.0.0.1:port whose reads and writes give
// up after 60 s (so that a test fails instead of hanging).
UniqueFd Connect(int port) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{60, 0};
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return UniqueFd();
  return fd;
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// What the server sent until it closed (or 60 s passed).
std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

// /metrics only (probes disabled), on a free loopback port.
bool ServeMetricsOnly(SideEndpoints& side, const metrics::Registry& registry) {
  std::string error;
  const bool started = side.Start(
      flags::HostPort{"127.0.0.1", 0}, flags::HostPort{"127.0.0.1", -1}, registry, [] { return true; },
      [](std::string*) { return true; }, &error);
  EXPECT_TRUE(started) << error;
  return started;
}

// Probes only, on a free loopback port.
struct Probes {
  Probes() {
    std::string error;
    EXPECT_TRUE(side.Start(
        flags::HostPort{"127.0.0.1", -1}, flags::HostPort{"127.0.0.1", 0}, registry, [] { return true; },
        [](std::string*) { return true; }, &error))
        << error;
  }
  ~Probes() { side.Stop(); }
  metrics::Registry registry;
  SideEndpoints side{NullLogger()};
};

// The kubelet's probe is answered while many clients hold connections to
// the same port with a request head they never finish: they cost no thread.
// (cpp-httplib's two threads, which served the probes before, were held by
// the first two of them until its 5 s read timeout closed them, so the
// probe's answer came only after the slow connections had been closed.)
TEST(SideEndpoints, ProbesAreAnsweredWhileSlowClientsHoldConnections) {
  Probes p;
  std::vector<UniqueFd> slow;
  for (int i = 0; i < 100; ++i) {
    slow.push_back(Connect(p.side.probe_port()));
    ASSERT_GE(slow.back().get(), 0);
    ASSERT_TRUE(SendAll(slow.back().get(), "GET /healthz HTTP/1.1\r\nHo"));
  }
  UniqueFd probe = Connect(p.side.probe_port());
  ASSERT_TRUE(SendAll(probe.get(), "GET /healthz HTTP/1.1\r\nHost: 10.0.0.1:8081\r\nConnection: close\r\n\r\n"));
  const std::string answer = ReadAll(probe.get());
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answer;
  EXPECT_NE(answer.find("\r\n\r\nok\n"), std::string::npos) << answer;
  // Every slow client is still connected: the probe did not wait for them.
  for (const auto& fd : slow) {
    char c;
    EXPECT_EQ(recv(fd.get(), &c, 1, MSG_DONTWAIT), -1);
    EXPECT_EQ(errno, EAGAIN);
  }
}

// A request line of 64 MiB without a newline is refused once it passes the
// 8 KiB head limit, not buffered: the client sees 431 long before it has
// sent it all, and the server stops reading.
TEST(SideEndpoints, AHugeRequestLineIsRefusedAfterTheHeadLimit) {
  Probes p;
  UniqueFd fd = Connect(p.side.probe_port());
  const std::string chunk(64 * 1024, 'a');
  ASSERT_TRUE(SendAll(fd.get(), "GET /"));
  std::string answer;
  size_t sent = 0;
  while (sent < (64u << 20) && answer.find("\r\n\r\n") == std::string::npos) {
    if (!SendAll(fd.get(), chunk)) break;  // reset: the server stopped reading
    sent += chunk.size();
    char buf[4096];
    for (ssize_t n; (n = recv(fd.get(), buf, sizeof buf, MSG_DONTWAIT)) > 0;)
      answer.append(buf, static_cast<size_t>(n));
  }
  if (answer.empty()) answer = ReadAll(fd.get());
  EXPECT_EQ(answer.rfind("HTTP/1.1 431 Request Header Fields Too Large\r\n", 0), 0u) << answer;
  EXPECT_LT(sent, 8u << 20) << "the server read on";
}

// A chunked body to /metrics is refused (411) before any of it is read, and
// a Content-Length over the 64 KiB body limit with 413: the body is never
// buffered whatever size the client announces.
TEST(SideEndpoints, BodiesAreRefusedBeforeTheyAreRead) {
  metrics::Registry registry;
  SideEndpoints side(NullLogger());
  ASSERT_TRUE(ServeMetricsOnly(side, registry));
  UniqueFd chunked = Connect(side.metrics_port());
  ASSERT_TRUE(SendAll(chunked.get(),
                      "POST /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "4000000\r\n"));
  const std::string refused = ReadAll(chunked.get());
  EXPECT_EQ(refused.rfind("HTTP/1.1 411 Length Required\r\n", 0), 0u) << refused;
  UniqueFd large = Connect(side.metrics_port());
  ASSERT_TRUE(SendAll(large.get(), "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 67108864\r\n\r\n"));
  const std::string too_large = ReadAll(large.get());
  EXPECT_EQ(too_large.rfind("HTTP/1.1 413 Payload Too Large\r\n", 0), 0u) << too_large;
  UniqueFd post = Connect(side.metrics_port());
  ASSERT_TRUE(
      SendAll(post.get(), "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"));
  const std::string not_allowed = ReadAll(post.get());
  EXPECT_EQ(not_allowed.rfind("HTTP/1.1 405 ", 0), 0u) << not_allowed;
  EXPECT_NE(not_allowed.find("\r\nAllow: GET, HEAD\r\n"), std::string::npos) << not_allowed;
  side.Stop();
}

TEST(SideEndpoints, MetricsAreTextFormat004FromEveryCollectable) {
  metrics::Registry registry;
  prometheus::BuildCounter()
      .Name("controller_runtime_reconcile_total")
      .Help("Total number of reconciliations per controller")
      .Register(registry.families())
      .Add({{"controller", "modelservice"}, {"result", "success"}})
      .Increment(3);
  SideEndpoints side(NullLogger());
  ASSERT_TRUE(ServeMetricsOnly(side, registry));
  httplib::Client client("127.0.0.1", side.metrics_port());
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(res->body.find("\ncontroller_runtime_reconcile_total{controller=\"modelservice\",result=\"success\"} 3\n"),
            std::string::npos)
      << res->body;
  EXPECT_EQ(res->body.rfind("# HELP process_", 0), 0u) << "the process collector comes first:\n" << res->body;
  EXPECT_EQ(client.Get("/healthz")->status, 404) << "probes are disabled";
  side.Stop();
}

// Prometheus asks for gzip: the answer is the same text, gzip-coded, with
// Content-Encoding and Vary; a client that does not ask gets the text.
TEST(SideEndpoints, MetricsAreGzipCodedWhenTheClientAcceptsIt) {
  metrics::Registry registry;
  auto& family = prometheus::BuildGauge().Name("modelservice_replicas").Help("Replicas").Register(registry.families());
  for (int i = 0; i < 3000; ++i) family.Add({{"name", "m-" + std::to_string(i)}, {"namespace", "bench"}}).Set(i);
  SideEndpoints side(NullLogger());
  ASSERT_TRUE(ServeMetricsOnly(side, registry));
  auto get = [&](const char* accept_encoding) {
    UniqueFd fd = Connect(side.metrics_port());
    EXPECT_TRUE(SendAll(
        fd.get(), std::string("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n") + accept_encoding + "\r\n"));
    const std::string answer = ReadAll(fd.get());
    const auto end = answer.find("\r\n\r\n");
    EXPECT_NE(end, std::string::npos) << answer;
    return std::pair(answer.substr(0, end + 2), answer.substr(end + 4));
  };
  const auto [plain_head, plain] = get("");
  EXPECT_EQ(plain_head.find("Content-Encoding"), std::string::npos) << plain_head;
  EXPECT_NE(plain_head.find("\r\nVary: Accept-Encoding\r\n"), std::string::npos) << plain_head;
  EXPECT_NE(plain.find("\nmodelservice_replicas{name=\"m-2999\",namespace=\"bench\"} 2999\n"), std::string::npos);

  const auto [head, body] = get("Accept-Encoding: gzip\r\n");
  EXPECT_NE(head.find("\r\nContent-Encoding: gzip\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("\r\nVary: Accept-Encoding\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("\r\nContent-Length: " + std::to_string(body.size()) + "\r\n"), std::string::npos) << head;
  EXPECT_LT(body.size(), plain.size() / 5);
  // The same text but for the process collector's values, which move.
  const std::string text = Gunzip(body);
  const auto ours = [](const std::string& t) { return t.substr(t.find("# HELP modelservice_replicas")); };
  EXPECT_EQ(ours(text), ours(plain));

  const auto [refused_head, refused] = get("Accept-Encoding: gzip;q=0, identity\r\n");
  EXPECT_EQ(refused_head.find("Content-Encoding"), std::string::npos) << refused_head;
  side.Stop();
}

TEST(SideEndpoints, OneServerWhenTheAddressesMatch) {
  metrics::Registry registry;
  SideEndpoints side(NullLogger());
  std::string error;
  std::atomic<bool> ready{false};
  // Port 0 twice is "the same address": one server on one free port.
  ASSERT_TRUE(side.Start(
      flags::HostPort{"127.0.0.1", 0}, flags::HostPort{"127.0.0.1", 0}, registry, [] { return true; },
      [&ready](std::string* why) {
        if (!ready) *why = "warming up";
        return ready.load();
      },
      &error))
      << error;
  EXPECT_EQ(side.probe_port(), side.metrics_port());
  httplib::Client client("127.0.0.1", side.metrics_port());
  EXPECT_EQ(client.Get("/healthz")->status, 200);
  auto not_ready = client.Get("/readyz");
  EXPECT_EQ(not_ready->status, 503);
  EXPECT_EQ(not_ready->body, "not ready: warming up\n");
  ready = true;
  EXPECT_EQ(client.Get("/readyz")->status, 200);
  EXPECT_EQ(client.Get("/metrics")->status, 200);
  side.Stop();
}

// A gate on /metrics (the controller's TokenReview and SubjectAccessReview,
// as kubebuilder's metrics filter): its refusals are answered with their
// status and reason, 401 with WWW-Authenticate: Bearer; the probes are
// never gated.
TEST(SideEndpoints, AGateSaysWhoMayReadTheMetrics) {
  metrics::Registry registry;
  std::string error;
  EndpointServer server(NullLogger());  // plain HTTP here: the gate alone
  server.ServeMetrics(registry.Collectables(), [](const Request& r) {
    const std::string* auth = r.Header("authorization");
    if (!auth) return GateDecision{401, "Unauthorized: no bearer token"};
    if (*auth != "Bearer reader") return GateDecision{403, "Forbidden: user \"x\" may not get /metrics"};
    return GateDecision{};
  });
  server.ServeProbes([] { return true; }, [](std::string*) { return true; });
  ASSERT_TRUE(server.Start("127.0.0.1", 0, &error)) << error;
  auto get = [&](const std::string& path, const std::string& auth) {
    UniqueFd fd = Connect(server.port());
    EXPECT_TRUE(SendAll(fd.get(), "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + auth + "\r\n"));
    return ReadAll(fd.get());
  };
  const std::string anonymous = get("/metrics", "");
  EXPECT_EQ(anonymous.rfind("HTTP/1.1 401 Unauthorized\r\n", 0), 0u) << anonymous;
  EXPECT_NE(anonymous.find("\r\nWWW-Authenticate: Bearer\r\n"), std::string::npos) << anonymous;
  EXPECT_NE(anonymous.find("\r\n\r\nUnauthorized: no bearer token\n"), std::string::npos) << anonymous;
  const std::string other = get("/metrics", "Authorization: Bearer other\r\n");
  EXPECT_EQ(other.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << other;
  EXPECT_NE(other.find("user \"x\" may not get /metrics\n"), std::string::npos) << other;
  const std::string reader = get("/metrics", "Authorization: Bearer reader\r\n");
  EXPECT_EQ(reader.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << reader;
  EXPECT_EQ(get("/healthz", "").rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  server.Stop();
}

// With /metrics over HTTPS the kubelet's plain-HTTP probes cannot share its
// address: said at start, not found out by a failing probe.
TEST(SideEndpoints, SecureMetricsCannotShareTheProbeAddress) {
  metrics::Registry registry;
  SideEndpoints side{NullLogger()};
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  std::string error;
  EXPECT_FALSE(side.Start(
      flags::HostPort{"127.0.0.1", 18081}, flags::HostPort{"127.0.0.1", 18081}, registry, [] { return true; },
      [](std::string*) { return true; }, &error, SecureMetrics{ctx.get(), nullptr}));
  EXPECT_EQ(error, "the probes cannot share the metrics address when /metrics is served over HTTPS");
}

}  // namespace
}  // namespace ms::transport
