// The modelservice-webhook program itself: flags, probes, /metrics checked
// by promtool, JSON logs, graceful SIGTERM.
#include <curl/curl.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "shared/process/files.h"
#include "test/support/test_support.h"
#include "test/webhook/webhook_process.h"

namespace {

using ms::webhook::test::Fetch;
using ms::webhook::test::FreePort;
using ms::webhook::test::WebhookBinary;
using nlohmann::json;

TEST_F(WebhookBinary, ServesProbesMetricsAndStopsCleanlyOnSigterm) {
  Spawn(StandardArgs());
  ASSERT_TRUE(WaitReady()) << ms::process::ReadFile(dir_.File("log.txt"));
  std::string body;
  EXPECT_EQ(Fetch("http://127.0.0.1:" + std::to_string(probes_) + "/healthz", &body), 200);

  // One denied review, so the log has a denial line and the metrics a sample.
  std::string review = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1",
    "operation":"CREATE","namespace":"default","name":"x","kind":{"group":"modelops.dev","version":"v1",
    "kind":"ModelService"},"object":{"apiVersion":"modelops.dev/v1","kind":"ModelService",
    "metadata":{"name":"x"},"spec":{"model":"m","replicas":0}}}})";
  std::string reply;
  ASSERT_EQ(Fetch("https://127.0.0.1:" + std::to_string(port_) + "/validate", &reply, dir_.File("ca.crt"), review),
            200);
  EXPECT_EQ(json::parse(reply)["response"]["allowed"], false);

  std::string metrics;
  ASSERT_EQ(Fetch("http://127.0.0.1:" + std::to_string(metrics_) + "/metrics", &metrics), 200);
  EXPECT_NE(metrics.find("controller_runtime_webhook_requests_total{code=\"200\",webhook=\"/validate\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("process_resident_memory_bytes "), std::string::npos);
  auto check = ms::test::Run(std::string(MS_PROMTOOL) + " check metrics", metrics);
  EXPECT_EQ(check.exit_code, 0) << check.output;

  ASSERT_EQ(kill(pid_, SIGTERM), 0);
  EXPECT_EQ(WaitExit(std::chrono::seconds(10)), 0);

  // Every log line is one JSON object; the denial is logged with its reason.
  std::istringstream log(ms::process::ReadFile(dir_.File("log.txt")));
  std::string line;
  bool denial = false, stopped = false;
  int lines = 0;
  while (std::getline(log, line)) {
    ++lines;
    json j;
    ASSERT_NO_THROW(j = json::parse(line)) << line;
    auto msg = j["msg"].get<std::string>();
    if (msg.find("denied /validate CREATE default/x") != std::string::npos &&
        msg.find("spec.replicas: Invalid value: 0: must be between 1 and 100") != std::string::npos)
      denial = true;
    if (msg == "stopped") stopped = true;
  }
  EXPECT_GE(lines, 3);
  EXPECT_TRUE(denial);
  EXPECT_TRUE(stopped);
}

// --shutdown-delay: after SIGTERM the program says it is not ready but goes
// on answering admission (the API server may still call it until the Pod
// leaves the Service's endpoints), each answer closing its connection; the
// delay ends on its own, or at once on a second signal.
TEST_F(WebhookBinary, ServesThroughTheShutdownDelayAfterSigterm) {
  auto args = StandardArgs();
  args.push_back("--shutdown-delay=10m");  // longer than this test: only the second signal ends it
  Spawn(args);
  ASSERT_TRUE(WaitReady()) << ms::process::ReadFile(dir_.File("log.txt"));
  ASSERT_EQ(kill(pid_, SIGTERM), 0);
  ASSERT_TRUE(AwaitLog("not ready; serving admission for 10m more (--shutdown-delay)"))
      << ms::process::ReadFile(dir_.File("log.txt"));
  std::string body;
  EXPECT_EQ(Fetch("http://127.0.0.1:" + std::to_string(probes_) + "/readyz", &body), 503);
  EXPECT_NE(body.find("shutting down"), std::string::npos) << body;
  body.clear();
  EXPECT_EQ(Fetch("http://127.0.0.1:" + std::to_string(probes_) + "/healthz", &body), 200);
  std::string review = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-2",
    "operation":"CREATE","namespace":"default","name":"x","kind":{"group":"modelops.dev","version":"v1",
    "kind":"ModelService"},"object":{"apiVersion":"modelops.dev/v1","kind":"ModelService",
    "metadata":{"name":"x"},"spec":{"model":"m"}}}})";
  std::string reply;
  ASSERT_EQ(Fetch("https://127.0.0.1:" + std::to_string(port_) + "/validate", &reply, dir_.File("ca.crt"), review),
            200);
  EXPECT_EQ(json::parse(reply)["response"]["allowed"], true) << reply;
  ASSERT_EQ(kill(pid_, SIGINT), 0);
  EXPECT_EQ(WaitExit(std::chrono::seconds(30)), 0) << ms::process::ReadFile(dir_.File("log.txt"));
  const std::string log = ms::process::ReadFile(dir_.File("log.txt"));
  EXPECT_NE(log.find("received signal 2 again: finishing requests in flight and shutting down"), std::string::npos)
      << log;
  EXPECT_NE(log.find("\"msg\":\"stopped\""), std::string::npos) << log;

  // A short delay ends by itself.
  args.back() = "--shutdown-delay=200ms";
  Spawn(args);
  ASSERT_TRUE(WaitReady()) << ms::process::ReadFile(dir_.File("log.txt"));
  ASSERT_EQ(kill(pid_, SIGTERM), 0);
  EXPECT_EQ(WaitExit(std::chrono::seconds(30)), 0) << ms::process::ReadFile(dir_.File("log.txt"));
  EXPECT_TRUE(AwaitLog("shutdown delay over: finishing requests in flight and shutting down"))
      << ms::process::ReadFile(dir_.File("log.txt"));
}

// Linked with jemalloc, the program runs its background thread (malloc_conf
// background_thread:true), which returns freed memory to the kernel while
// the webhook is idle after load: RSS 73 -> 52 MiB without it, -> 17 MiB
// with it (bench/results/rss.md).
TEST_F(WebhookBinary, JemallocBackgroundThreadRuns) {
  if (!MS_JEMALLOC_LINKED) GTEST_SKIP() << "built without jemalloc (sanitizers)";
  Spawn(StandardArgs());
  ASSERT_TRUE(WaitReady()) << ms::process::ReadFile(dir_.File("log.txt"));
  auto threads = ms::test::Run("cat /proc/" + std::to_string(pid_) + "/task/*/comm");
  EXPECT_NE(threads.output.find("jemalloc_bg_thd"), std::string::npos) << threads.output;
}

// --cert-mode self, first install: the Secret volume is an empty directory
// until the controller has made the Secret and the kubelet synced it. The
// webhook waits (alive, not ready) instead of exiting, serves once the files
// are there, and a SIGTERM meanwhile ends it cleanly.
TEST_F(WebhookBinary, WaitsForItsCertificateInAnEmptyCertDir) {
  ASSERT_EQ(rename(dir_.File("tls.crt").c_str(), dir_.File("tls.crt.later").c_str()), 0);
  Spawn(StandardArgs());
  const std::string probes = "http://127.0.0.1:" + std::to_string(probes_);
  // It logs that it waits once its probes listen.
  ASSERT_TRUE(AwaitLog("waiting for the serving certificate")) << ms::process::ReadFile(dir_.File("log.txt"));
  std::string body;
  EXPECT_EQ(Fetch(probes + "/readyz", &body), 503);
  EXPECT_NE(body.find("waiting for the serving certificate"), std::string::npos) << body;
  std::string alive;
  EXPECT_EQ(Fetch(probes + "/healthz", &alive), 200);
  ASSERT_EQ(rename(dir_.File("tls.crt.later").c_str(), dir_.File("tls.crt").c_str()), 0);
  ASSERT_TRUE(WaitReady()) << ms::process::ReadFile(dir_.File("log.txt"));
  const auto version = ms::test::Run(std::string(MS_WEBHOOK_BINARY) + " --version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.output.rfind("modelservice-webhook version ", 0), 0u) << version.output;
  kill(pid_, SIGTERM);
  // (30 s: under ASan on a loaded machine this exit once took over 10 s;
  // the drain itself is bounded by --read-timeout, 10 s.)
  EXPECT_EQ(WaitExit(std::chrono::seconds(30)), 0) << ms::process::ReadFile(dir_.File("log.txt"));

  ASSERT_EQ(rename(dir_.File("tls.crt").c_str(), dir_.File("tls.crt.later").c_str()), 0);
  Spawn(StandardArgs());
  ASSERT_TRUE(AwaitLog("waiting for the serving certificate")) << ms::process::ReadFile(dir_.File("log.txt"));
  kill(pid_, SIGTERM);
  EXPECT_EQ(WaitExit(std::chrono::seconds(30)), 0) << ms::process::ReadFile(dir_.File("log.txt"));
  EXPECT_TRUE(AwaitLog("while waiting for the serving certificate")) << ms::process::ReadFile(dir_.File("log.txt"));
}

TEST_F(WebhookBinary, BadFlagsAndMissingCertificatesFailClearly) {
  auto help = ms::test::Run(std::string(MS_WEBHOOK_BINARY) + " --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("--tls-min-version"), std::string::npos);
  auto bad = ms::test::Run(std::string(MS_WEBHOOK_BINARY) + " --no-such-flag");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.output.find("unknown flag: --no-such-flag"), std::string::npos) << bad.output;
  auto tls = ms::test::Run(std::string(MS_WEBHOOK_BINARY) + " --tls-min-version 1.1 --log-format text");
  EXPECT_EQ(tls.exit_code, 2);
  EXPECT_NE(tls.output.find("invalid --tls-min-version 1.1"), std::string::npos) << tls.output;
  auto nocert = ms::test::Run(std::string(MS_WEBHOOK_BINARY) + " --cert-dir /nonexistent --port 0 --log-format text" +
                              " --metrics-bind-address 0 --health-probe-bind-address 0");
  EXPECT_EQ(nocert.exit_code, 1);
  EXPECT_NE(nocert.output.find("cannot read /nonexistent/tls.crt"), std::string::npos) << nocert.output;
}

// --metrics-secure (the chart's default): /metrics over HTTPS with the
// serving certificate; plain HTTP there is refused; the kubelet's probes
// stay plain HTTP on their own port.
TEST_F(WebhookBinary, MetricsSecureServesMetricsOverHttpsAndProbesOverHttp) {
  auto args = StandardArgs();
  args.push_back("--metrics-secure");
  Spawn(args);
  ASSERT_TRUE(WaitReady()) << ms::process::ReadFile(dir_.File("log.txt"));
  std::string metrics, plain, probe;
  EXPECT_EQ(Fetch("https://127.0.0.1:" + std::to_string(metrics_) + "/metrics", &metrics, dir_.File("ca.crt")), 200);
  EXPECT_NE(metrics.find("\nmodelservice_build_info{"), std::string::npos) << metrics;
  EXPECT_EQ(Fetch("http://127.0.0.1:" + std::to_string(metrics_) + "/metrics", &plain), 400);
  EXPECT_EQ(plain, "Client sent an HTTP request to an HTTPS server.\n");
  EXPECT_EQ(Fetch("http://127.0.0.1:" + std::to_string(probes_) + "/readyz", &probe), 200);
}

}  // namespace
