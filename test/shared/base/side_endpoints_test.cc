// The side endpoints over real loopback HTTP: /metrics with the text
// format's Content-Type, the probes, and one server when the addresses match.
#include "base/side_endpoints.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <spdlog/sinks/null_sink.h>

#include <atomic>

#include "base/metrics.h"

namespace ms {
namespace {

std::shared_ptr<spdlog::logger> NullLogger() {
  return std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::null_sink_mt>());
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
  std::string error;
  ASSERT_TRUE(side.Start(
      HostPort{"127.0.0.1", 0}, HostPort{"127.0.0.1", -1}, registry, [] { return true; },
      [](std::string*) { return true; }, &error))
      << error;
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

TEST(SideEndpoints, OneServerWhenTheAddressesMatch) {
  metrics::Registry registry;
  SideEndpoints side(NullLogger());
  std::string error;
  std::atomic<bool> ready{false};
  // Port 0 twice is "the same address": one server on one free port.
  ASSERT_TRUE(side.Start(
      HostPort{"127.0.0.1", 0}, HostPort{"127.0.0.1", 0}, registry, [] { return true; },
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

}  // namespace
}  // namespace ms
