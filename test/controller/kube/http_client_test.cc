#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "controller/kube/curl_handles.h"
#include "controller/kube/http_client.h"
#include "controller/kube/paths.h"
#include "shared/metrics/metrics.h"
#include "shared/process/files.h"
#include "test/support/fake_clock.h"
#include "test/support/http_test_server.h"
#include "test/support/notification.h"

namespace ms::kube {
namespace {

// libcurl's global set-up, as main does, before any test starts a thread.
const kube::curl::GlobalInit kCurl;

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using nlohmann::json;

using TestServer = test::HttpTestServer;

class KubeHttpClientTest : public ::testing::Test {
 protected:
  void SetUp() override {}
  RestConfig Config() {
    RestConfig c;
    c.server = srv_.url();
    c.bearer_token = "secret";
    c.user_agent = "kube-test/1.0";
    return c;
  }
  TestServer srv_;
  FakeClock clock_;
  metrics::Registry registry_;
  ClientMetrics metrics_{registry_};
};

int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

TEST_F(KubeHttpClientTest, GetDecodesJsonAndSendsHeaders) {
  httplib::Headers seen;
  std::string seen_query;
  srv_.server.Get("/api/v1/namespaces/ns/services/a", [&](const httplib::Request& req, httplib::Response& res) {
    seen = req.headers;
    seen_query = req.get_param_value("labelSelector");
    res.set_content(R"({"kind":"Service","metadata":{"name":"a","resourceVersion":"7"}})", "application/json");
  });
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  Result r = client.Get("/api/v1/namespaces/ns/services/a?labelSelector=app%3Dx");
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(r.code, 200);
  EXPECT_EQ(r.body["metadata"]["resourceVersion"], "7");
  // The body's size as received (a LIST's next page is sized by it).
  EXPECT_EQ(r.body_bytes, std::string(R"({"kind":"Service","metadata":{"name":"a","resourceVersion":"7"}})").size());
  EXPECT_EQ(seen_query, "app=x");
  auto header = [&](const char* k) {
    auto it = seen.find(k);
    return it == seen.end() ? std::string("<none>") : it->second;
  };
  EXPECT_EQ(header("Accept"), "application/json");
  EXPECT_EQ(header("Authorization"), "Bearer secret");
  EXPECT_EQ(header("User-Agent"), "kube-test/1.0");
}

TEST_F(KubeHttpClientTest, SequentialRequestsReuseTheConnection) {
  std::mutex mu;
  std::vector<int> ports;
  srv_.server.Get("/k", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> g(mu);
    ports.push_back(req.remote_port);
    res.set_content("{}", "application/json");
  });
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(client.Get("/k").ok());
  ASSERT_EQ(ports.size(), 5u);
  for (int p : ports) EXPECT_EQ(p, ports[0]);  // one keep-alive connection
}

TEST_F(KubeHttpClientTest, NotFoundStatusIsDecoded) {
  srv_.server.Get("/apis/apps/v1/namespaces/ns/deployments/x", [](const httplib::Request&, httplib::Response& res) {
    res.status = 404;
    res.set_content(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                    R"("message":"deployments.apps \"x\" not found","reason":"NotFound",)"
                    R"("details":{"name":"x","group":"apps","kind":"deployments"},"code":404})",
                    "application/json");
  });
  srv_.server.Post("/api/v1/namespaces/ns/services", [](const httplib::Request&, httplib::Response& res) {
    res.status = 409;
    res.set_content(R"({"kind":"Status","status":"Failure","message":"services \"a\" already exists",)"
                    R"("reason":"AlreadyExists","code":409})",
                    "application/json");
  });
  srv_.server.Get("/broken", [](const httplib::Request&, httplib::Response& res) {
    res.status = 502;
    res.set_content("upstream down", "text/plain");
  });
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  Result r = client.Get("/apis/apps/v1/namespaces/ns/deployments/x");
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.IsNotFound());
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->code, 404);
  EXPECT_EQ(r.error->reason, "NotFound");
  EXPECT_EQ(r.error->message, "deployments.apps \"x\" not found");

  Result c = client.Create("/api/v1/namespaces/ns/services", {{"metadata", {{"name", "a"}}}});
  EXPECT_TRUE(c.IsAlreadyExists());
  EXPECT_FALSE(c.IsConflict());

  Result b = client.Get("/broken");
  EXPECT_EQ(b.code, 502);
  EXPECT_EQ(b.error->reason, "Unknown");
  EXPECT_EQ(b.error->message, "upstream down");
}

TEST_F(KubeHttpClientTest, WriteVerbsSendBodiesWithContentTypes) {
  std::mutex mu;
  std::vector<std::string> seen;  // "METHOD content-type body"
  auto record = [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> g(mu);
    seen.push_back(req.method + " " + req.get_header_value("Content-Type") + " " + req.body);
    res.set_content(R"({"ok":true})", "application/json");
  };
  srv_.server.Post("/o", record);
  srv_.server.Put("/o", record);
  srv_.server.Patch("/o", record);
  srv_.server.Delete("/o", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> g(mu);
    seen.push_back(req.method + " " + req.get_header_value("Content-Type") + " " + req.body);
    res.set_content(R"({"kind":"Status","status":"Success"})", "application/json");
  });
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  const nlohmann::json body = {{"a", 1}};
  EXPECT_TRUE(client.Create("/o", body).ok());
  EXPECT_TRUE(client.Update("/o", body).ok());
  EXPECT_TRUE(client.Patch("/o", PatchType::kMerge, body).ok());
  Result d = client.Delete("/o");
  EXPECT_TRUE(d.ok());
  EXPECT_EQ(d.body["status"], "Success");
  EXPECT_TRUE(client.Delete("/o", {{"kind", "DeleteOptions"}, {"preconditions", {{"uid", "u"}}}}).ok());
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0], R"(POST application/json {"a":1})");
  EXPECT_EQ(seen[1], R"(PUT application/json {"a":1})");
  EXPECT_EQ(seen[2], R"(PATCH application/merge-patch+json {"a":1})");
  EXPECT_EQ(seen[3], "DELETE  ");
  EXPECT_EQ(seen[4], R"(DELETE application/json {"kind":"DeleteOptions","preconditions":{"uid":"u"}})");
}

TEST_F(KubeHttpClientTest, TransportErrorOnClosedPort) {
  RestConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(ClosedPort());
  metrics::Registry registry;
  ClientMetrics counted(registry);
  HttpClient client(cfg, clock_, counted, nullptr);
  Result r = client.Get("/api/v1/pods");
  EXPECT_EQ(r.code, 0);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->code, 0);
  EXPECT_EQ(r.error->reason, "Transport");
  EXPECT_FALSE(r.error->message.empty());
  std::stop_source stop;
  Result w = client.Watch(
      "/api/v1/pods?watch=true", [](const WatchEvent&) { return true; }, stop.get_token());
  EXPECT_EQ(w.code, 0);
  EXPECT_EQ(w.error->reason, "Transport");
  const std::string text = metrics::Serialize(registry);
  EXPECT_NE(text.find("rest_client_requests_total{code=\"<error>\",host=\"" + client.host() + "\",method=\"GET\"} 2"),
            std::string::npos)
      << text;
}

TEST_F(KubeHttpClientTest, RequestTimeout) {
  srv_.server.Get("/slow", [this](const httplib::Request&, httplib::Response& res) {
    // Slow until the test ends (bounded), so teardown does not wait long.
    srv_.stopping.Wait(2s);
    res.set_content("{}", "application/json");
  });
  srv_.Start();
  HttpClientOptions opts;
  opts.request_timeout = 100ms;
  HttpClient client(Config(), clock_, metrics_, nullptr, opts);
  const auto start = std::chrono::steady_clock::now();
  Result r = client.Get("/slow");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1500ms);
  EXPECT_EQ(r.code, 0);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->reason, "Transport");
}

// The body is held in memory up to max_response_bytes (curl::BoundedBody,
// shared with the Prometheus client): a larger answer fails, it is not cut.
TEST_F(KubeHttpClientTest, ResponseLargerThanTheLimitFails) {
  srv_.server.Get("/big", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"data\":\"" + std::string(4096, 'x') + "\"}", "application/json");
  });
  srv_.Start();
  HttpClientOptions opts;
  opts.transport.max_response_bytes = 1024;
  HttpClient small(Config(), clock_, metrics_, nullptr, opts);
  Result r = small.Get("/big");
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->reason, kReasonTooLarge);
  EXPECT_NE(r.error->message.find("response larger than 1024 bytes"), std::string::npos) << r.error->message;
  opts.transport.max_response_bytes = 1 << 20;
  HttpClient large(Config(), clock_, metrics_, nullptr, opts);
  Result ok = large.Get("/big");
  ASSERT_FALSE(ok.error.has_value()) << ok.error->message;
  EXPECT_EQ(ok.body["data"].get<std::string>().size(), 4096u);
}

// A LIST or WATCH that names the annotations it keeps gets each object
// without the others (and without managedFields); a GET keeps them all.
TEST_F(KubeHttpClientTest, ListsAndWatchesLeaveOutTheAnnotationsNotKept) {
  const std::string object =
      R"({"metadata":{"name":"a","annotations":{"keep":"1","tenant":"big"},"managedFields":[{}]},"spec":{}})";
  srv_.server.Get("/list", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.has_param("watch")) {
      res.set_content(R"({"type":"ADDED","object":)" + object + "}\n", "application/json");
      return;
    }
    res.set_content(R"({"kind":"List","metadata":{},"items":[)" + object + "]}", "application/json");
  });
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  const KeptAnnotations keep{"keep"};
  const json trimmed = {{"keep", "1"}};
  const std::string path = "/list";
  Result listed = client.Do({Call::Verb::kList, path, nullptr, {}, &keep});
  ASSERT_TRUE(listed.ok()) << listed.Text();
  EXPECT_EQ(listed.body["items"][0]["metadata"], json({{"name", "a"}, {"annotations", trimmed}}));
  std::vector<json> watched;
  Result w = client.WatchKeeping("/list?watch=true", &keep,
                                 [&](const WatchEvent& e) {
                                   watched.push_back(e.object);
                                   return true;
                                 },
                                 {});
  ASSERT_TRUE(w.ok()) << w.Text();
  ASSERT_EQ(watched.size(), 1u);
  EXPECT_EQ(watched[0]["metadata"]["annotations"], trimmed);
  EXPECT_EQ(client.Get("/list").body["items"][0]["metadata"]["annotations"], json({{"keep", "1"}, {"tenant", "big"}}));
}

TEST_F(KubeHttpClientTest, MetricsCountCodesMethodsAndHost) {
  srv_.server.Get("/ok",
                  [](const httplib::Request&, httplib::Response& res) { res.set_content("{}", "application/json"); });
  srv_.server.Put("/ok", [](const httplib::Request&, httplib::Response& res) {
    res.status = 409;
    res.set_content(R"({"kind":"Status","reason":"Conflict","code":409})", "application/json");
  });
  srv_.Start();
  metrics::Registry registry;
  ClientMetrics counted(registry);
  HttpClient client(Config(), clock_, counted, nullptr);
  EXPECT_EQ(client.host(), "127.0.0.1:" + std::to_string(srv_.port));
  client.Get("/ok");
  client.Get("/ok");
  client.List("/ok");
  client.Update("/ok", nlohmann::json::object());
  const std::string text = metrics::Serialize(registry);
  const std::string host = "host=\"127.0.0.1:" + std::to_string(srv_.port) + "\"";
  EXPECT_NE(text.find("# TYPE rest_client_requests_total counter"), std::string::npos);
  EXPECT_NE(text.find("rest_client_requests_total{code=\"200\"," + host + ",method=\"GET\"} 3"), std::string::npos)
      << text;
  EXPECT_NE(text.find("rest_client_requests_total{code=\"409\"," + host + ",method=\"PUT\"} 1"), std::string::npos)
      << text;
}

// A status code is a label value the server chooses: one that is not HTTP
// (outside 100-599) is counted as UNKNOWN, not as a new series.
TEST_F(KubeHttpClientTest, MetricsCodeLabelIsAClosedSet) {
  srv_.server.Get(R"(/code/(\d+))", [](const httplib::Request& req, httplib::Response& res) {
    res.status = std::stoi(req.matches[1]);
    res.set_content("{}", "application/json");
  });
  srv_.Start();
  metrics::Registry registry;
  ClientMetrics counted(registry);
  HttpClient client(Config(), clock_, counted, nullptr);
  for (int code : {600, 777, 999}) client.Get("/code/" + std::to_string(code));
  const std::string text = metrics::Serialize(registry);
  const std::string host = "host=\"127.0.0.1:" + std::to_string(srv_.port) + "\"";
  EXPECT_EQ(text.find("code=\"777\""), std::string::npos) << text;
  EXPECT_NE(text.find("rest_client_requests_total{code=\"UNKNOWN\"," + host + ",method=\"GET\"} 3"), std::string::npos)
      << text;
}

TEST_F(KubeHttpClientTest, TokenRereadAfter401) {
  const fs::path dir = fs::temp_directory_path() / ("kube_http_token_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string token_file = (dir / "token").string();
  std::ofstream(token_file) << "old";
  std::atomic<int> calls{0};
  srv_.server.Get("/x", [&](const httplib::Request& req, httplib::Response& res) {
    ++calls;
    if (req.get_header_value("Authorization") != "Bearer new") {
      res.status = 401;
      res.set_content(R"({"kind":"Status","reason":"Unauthorized","code":401})", "application/json");
      return;
    }
    res.set_content("{}", "application/json");
  });
  srv_.Start();
  RestConfig cfg = Config();
  cfg.bearer_token = "old";
  cfg.token_file = token_file;
  HttpClient client(cfg, clock_, metrics_);
  Result r = client.Get("/x");
  EXPECT_EQ(r.code, 401);  // the file still holds the rejected token: no retry
  EXPECT_EQ(calls.load(), 1);
  std::ofstream(token_file) << "new\n";  // rotated
  r = client.Get("/x");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(calls.load(), 3);  // 401, re-read, retried
  fs::remove_all(dir);
}

TEST_F(KubeHttpClientTest, RateLimitedInVirtualTime) {
  std::atomic<int> calls{0};
  srv_.server.Get("/r", [&](const httplib::Request&, httplib::Response& res) {
    ++calls;
    res.set_content("{}", "application/json");
  });
  srv_.Start();
  RestConfig cfg = Config();
  cfg.qps = 1;
  cfg.burst = 2;
  HttpClient client(cfg, clock_, metrics_);
  EXPECT_TRUE(client.Get("/r").ok());
  EXPECT_TRUE(client.Get("/r").ok());
  std::atomic<bool> third_done{false};
  std::thread t([&] {
    client.Get("/r");
    third_done = true;
  });
  ASSERT_TRUE(clock_.AwaitWaiters(1));  // the third waits for a token
  EXPECT_FALSE(third_done.load());
  EXPECT_EQ(calls.load(), 2);
  clock_.Advance(1s);
  t.join();
  EXPECT_TRUE(third_done.load());
  EXPECT_EQ(calls.load(), 3);
}

TEST_F(KubeHttpClientTest, OneTokenBucketPerGroupVersion) {
  std::atomic<int> calls{0};
  for (const char* p : {"/apis/apps/v1/deployments", "/api/v1/services", "/apis/modelops.dev/v1/modelservices"}) {
    srv_.server.Get(p, [&](const httplib::Request&, httplib::Response& res) {
      ++calls;
      res.set_content("{}", "application/json");
    });
  }
  srv_.Start();
  RestConfig cfg = Config();
  cfg.qps = 1;
  cfg.burst = 1;
  HttpClient client(cfg, clock_, metrics_);
  // Each group-version has its own token: three requests pass at once, no
  // virtual time needed.
  EXPECT_TRUE(client.Get("/apis/apps/v1/deployments").ok());
  EXPECT_TRUE(client.Get("/api/v1/services").ok());
  EXPECT_TRUE(client.Get("/apis/modelops.dev/v1/modelservices").ok());
  EXPECT_EQ(calls.load(), 3);
  // A second apps/v1 request waits for its bucket, while v1 is not slowed by it.
  std::atomic<bool> apps_done{false};
  std::thread t([&] {
    client.Get("/apis/apps/v1/deployments");
    apps_done = true;
  });
  ASSERT_TRUE(clock_.AwaitWaiters(1));  // apps/v1 waits for its bucket
  EXPECT_FALSE(apps_done.load());
  clock_.Advance(1s);  // one token for every bucket
  EXPECT_TRUE(client.Get("/api/v1/services").ok());
  t.join();
  EXPECT_TRUE(apps_done.load());
  EXPECT_EQ(calls.load(), 5);
}

TEST_F(KubeHttpClientTest, ConcurrentRequestsFromManyThreads) {
  std::atomic<int> calls{0};
  srv_.server.Get(R"(/c/(\d+))", [&](const httplib::Request& req, httplib::Response& res) {
    ++calls;
    res.set_content(nlohmann::json{{"n", std::stoi(req.matches[1])}}.dump(), "application/json");
  });
  srv_.Start();
  RestConfig cfg = Config();
  cfg.qps = 0;  // unlimited
  HttpClient client(cfg, clock_, metrics_);
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  // 4 threads: httplib 0.11 listens with a backlog of 5, and more
  // simultaneous connects get a SYN dropped (a 1 s retransmit).
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const int n = t * 100 + i;
        Result r = client.Get("/c/" + std::to_string(n));
        if (r.ok() && r.body["n"] == n) ++good;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 200);
  EXPECT_EQ(calls.load(), 200);
}

TEST_F(KubeHttpClientTest, ChunkedWatchWithEventsSplitAcrossChunks) {
  const std::string stream = R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}})"
                             "\n"
                             R"({"type":"MODIFIED","object":{"metadata":{"name":"a","resourceVersion":"2"}}})"
                             "\n"
                             R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"3"}}})"
                             "\n";
  std::string seen_query;
  srv_.server.Get("/api/v1/pods", [&](const httplib::Request& req, httplib::Response& res) {
    seen_query = req.get_param_value("watch");
    res.set_chunked_content_provider("application/json", [&](size_t offset, httplib::DataSink& sink) {
      // Chunks of 17 bytes: lines straddle chunk boundaries (how the
      // reads split them is the network's business; the decoder's own test
      // splits lines at every byte).
      const size_t n = std::min<size_t>(17, stream.size() - offset);
      sink.write(stream.data() + offset, n);
      if (offset + n >= stream.size()) sink.done();
      return true;
    });
  });
  srv_.Start();
  metrics::Registry registry;
  ClientMetrics counted(registry);
  HttpClient client(Config(), clock_, counted, nullptr);
  std::vector<WatchEvent> events;
  std::stop_source stop;
  Result r = client.Watch(
      "/api/v1/pods?watch=true",
      [&](const WatchEvent& e) {
        events.push_back(e);
        return true;
      },
      stop.get_token());
  EXPECT_TRUE(r.ok()) << (r.error ? r.error->message : "");
  EXPECT_EQ(r.code, 200);
  EXPECT_EQ(seen_query, "true");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, "ADDED");
  EXPECT_EQ(events[1].type, "MODIFIED");
  EXPECT_EQ(events[1].object["metadata"]["resourceVersion"], "2");
  EXPECT_EQ(events[2].type, "BOOKMARK");
  EXPECT_NE(metrics::Serialize(registry).find("code=\"200\""), std::string::npos);
}

TEST_F(KubeHttpClientTest, WatchHttpErrorIsDecoded) {
  srv_.server.Get("/w", [](const httplib::Request&, httplib::Response& res) {
    res.status = 410;
    res.set_content(R"({"kind":"Status","status":"Failure","message":"too old resource version",)"
                    R"("reason":"Expired","code":410})",
                    "application/json");
  });
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  std::stop_source stop;
  int events = 0;
  Result r = client.Watch(
      "/w", [&](const WatchEvent&) { return ++events > 0; }, stop.get_token());
  EXPECT_TRUE(r.IsGone());
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->reason, "Expired");
  EXPECT_EQ(events, 0);
}

// A watch stream that sends one event (when `first_event`), then nothing,
// until the server goes away.
void HangingWatch(TestServer& srv, bool first_event = true) {
  srv.server.Get("/hang", [&srv, first_event](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("application/json", [&srv, first_event](size_t offset, httplib::DataSink& sink) {
      if (offset == 0 && first_event) {
        const std::string e = R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})"
                              "\n";
        sink.write(e.data(), e.size());
      }
      srv.stopping.Wait();  // then nothing, until the server stops
      return false;
    });
  });
}

TEST_F(KubeHttpClientTest, StopFlagEndsHangingWatchPromptly) {
  HangingWatch(srv_);
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  std::stop_source stop;
  std::atomic<int> events{0};
  test::Notification first_event;
  std::chrono::steady_clock::time_point returned;
  std::thread t([&] {
    Result r = client.Watch(
        "/hang",
        [&](const WatchEvent&) {
          ++events;
          first_event.Notify();
          return true;
        },
        stop.get_token());
    returned = std::chrono::steady_clock::now();
    EXPECT_TRUE(r.ok());
  });
  ASSERT_TRUE(first_event.Wait());  // then the stream stays quiet
  ASSERT_EQ(events.load(), 1);
  const auto stopped_at = std::chrono::steady_clock::now();
  stop.request_stop();
  t.join();
  EXPECT_LT(returned - stopped_at, 1s);  // woken by the stop request
}

TEST_F(KubeHttpClientTest, ExceptionInWatchHandlerEndsTheWatchWithAnError) {
  HangingWatch(srv_);
  srv_.server.Get("/after",
                  [](const httplib::Request&, httplib::Response& res) { res.set_content("{}", "application/json"); });
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  std::stop_source stop;
  // What a careless handler does with `controller: "yes"`: a type error,
  // thrown inside libcurl's write callback. It must not cross it.
  Result r = client.Watch(
      "/hang", [&](const WatchEvent& e) -> bool { return e.object["metadata"].at("nope").get<bool>(); },
      stop.get_token());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.error->message.find("watch event handler failed"), std::string::npos) << r.error->message;
  // The client still works afterwards.
  EXPECT_TRUE(client.Get("/after").ok());
}

TEST_F(KubeHttpClientTest, ConsumerReturningFalseEndsWatch) {
  HangingWatch(srv_);
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  std::stop_source stop;
  int events = 0;
  Result r = client.Watch(
      "/hang",
      [&](const WatchEvent&) {
        ++events;
        return false;
      },
      stop.get_token());
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(events, 1);
}

TEST_F(KubeHttpClientTest, StalledWatchIsDroppedByLowSpeedLimit) {
  // No bytes at all (curl averages the speed over its last few seconds, so an
  // early event would delay the verdict).
  HangingWatch(srv_, /*first_event=*/false);
  srv_.Start();
  HttpClientOptions opts;
  opts.transport.watch_low_speed_time = 1s;
  HttpClient client(Config(), clock_, metrics_, nullptr, opts);
  std::stop_source stop;
  const auto start = std::chrono::steady_clock::now();
  Result r = client.Watch(
      "/hang", [](const WatchEvent&) { return true; }, stop.get_token());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);
  EXPECT_EQ(r.code, 0);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->reason, "Transport");
}

// Writes may leave while the clock is before `until`.
class ClockGate final : public WriteGate {
 public:
  ClockGate(const clock::Clock& clock, clock::Clock::TimePoint until) : clock_(clock), until_(until) {}
  clock::Clock::Duration WriteTimeLeft() const override { return until_ - clock_.Now(); }

 private:
  const clock::Clock& clock_;
  clock::Clock::TimePoint until_;
};

// Counts requests by method; "/slow" answers once the test lets it (or at
// teardown). Stops the server before it goes away, so that no handler
// outlives it.
struct CountingApi {
  explicit CountingApi(TestServer& srv) : srv_(srv) {
    auto count = [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard<std::mutex> g(mu);
        seen.push_back(req.method);
      }
      res.status = req.method == "POST" ? 201 : 200;
      res.set_content(R"({"metadata":{"name":"x"}})", "application/json");
    };
    auto slow = [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard<std::mutex> g(mu);
        seen.push_back(req.method + " slow");
      }
      in_slow.Notify();
      release.Wait();  // the test releases it, at the latest when it ends
      res.set_content("{}", "application/json");
    };
    srv.server.Get("/x", count).Post("/x", count).Put("/x", count).Patch("/x", count).Delete("/x", count);
    srv.server.Get("/slow", slow).Post("/slow", slow).Put("/slow", slow);
  }
  ~CountingApi() {
    release.Notify();
    srv_.Stop();
  }
  std::vector<std::string> Seen() {
    std::lock_guard<std::mutex> g(mu);
    return seen;
  }
  TestServer& srv_;
  std::mutex mu;
  std::vector<std::string> seen;
  test::Notification in_slow, release;
};

TEST_F(KubeHttpClientTest, GatedWritesAreNotSentOnceTheGateIsClosedReadsAre) {
  CountingApi api(srv_);
  srv_.Start();
  ClockGate gate(clock_, clock_.Now() + 10s);
  HttpClientOptions opts;
  opts.write_gate = &gate;
  metrics::Registry registry;
  ClientMetrics counted(registry);
  HttpClient client(Config(), clock_, counted, nullptr, opts);
  EXPECT_TRUE(client.Create("/x", {{"a", 1}}).ok());
  clock_.Advance(10s);  // the moment of loss
  const json body{{"a", 2}};
  for (const Result& r : {client.Create("/x", body), client.Update("/x", body),
                          client.Patch("/x", PatchType::kMerge, body), client.Delete("/x")}) {
    EXPECT_EQ(r.code, 0);
    ASSERT_TRUE(r.error.has_value());
    EXPECT_EQ(r.error->reason, kReasonNotLeader);
    EXPECT_EQ(r.error->message, "not sent: this process does not hold the leader Lease");
  }
  EXPECT_TRUE(client.Get("/x").ok()) << "reads continue";
  EXPECT_EQ(api.Seen(), (std::vector<std::string>{"POST", "GET"}));
  const std::string text = metrics::Serialize(registry);
  EXPECT_EQ(text.find("<error>"), std::string::npos) << "requests never sent are not counted as sent\n" << text;
}

TEST_F(KubeHttpClientTest, GateIsAskedWhenTheWriteIsSentNotWhenItWasCalled) {
  // A write that waits for the rate limiter across the moment of loss (the
  // paused or throttled leader of issue 13) is not sent afterwards.
  CountingApi api(srv_);
  srv_.Start();
  ClockGate gate(clock_, clock_.Now() + 10s);
  HttpClientOptions opts;
  opts.write_gate = &gate;
  RestConfig cfg = Config();
  cfg.qps = 0.05;  // one token per 20 s
  cfg.burst = 1;
  HttpClient client(cfg, clock_, metrics_, nullptr, opts);
  ASSERT_TRUE(client.Create("/x", {{"n", 1}}).ok());  // takes the only token
  const uint64_t waits_before = clock_.waits();
  std::optional<Result> second;
  std::thread t([&] { second = client.Create("/x", {{"n", 2}}); });  // gate open now
  while (clock_.waits() == waits_before) std::this_thread::yield();  // in the limiter's wait
  clock_.Advance(20s);                                               // the token is ready; the Lease was lost meanwhile
  t.join();
  ASSERT_TRUE(second && second->error);
  EXPECT_EQ(second->error->reason, kReasonNotLeader);
  EXPECT_EQ(api.Seen(), (std::vector<std::string>{"POST"}));
}

TEST_F(KubeHttpClientTest, WriteInFlightIsAbortedWhenTheGateCloses) {
  CountingApi api(srv_);
  srv_.Start();
  ClockGate gate(clock_, clock_.Now() + 10s);
  HttpClientOptions opts;
  opts.write_gate = &gate;
  HttpClient client(Config(), clock_, metrics_, nullptr, opts);
  std::optional<Result> r;
  std::thread t([&] { r = client.Update("/slow", {{"n", 1}}); });
  ASSERT_TRUE(api.in_slow.Wait());
  clock_.Advance(10s);  // the progress callback sees it (libcurl calls it at least once a second)
  t.join();
  api.release.Notify();
  ASSERT_TRUE(r && r->error);
  EXPECT_EQ(r->error->reason, kReasonNotLeader);
  EXPECT_EQ(r->error->message, "aborted in flight: this process does not hold the leader Lease");
}

TEST_F(KubeHttpClientTest, WriteTimeoutIsTheGatesTimeLeft) {
  // On the real clock: a write to a server that does not answer ends when
  // the gate closes (0.3 s), not after request_timeout (60 s).
  CountingApi api(srv_);
  srv_.Start();
  clock::SystemClock real;
  ClockGate gate(real, real.Now() + 300ms);
  HttpClientOptions opts;
  opts.write_gate = &gate;
  opts.request_timeout = 60s;
  HttpClient client(Config(), real, metrics_, nullptr, opts);
  const auto start = real.Now();
  const Result r = client.Create("/slow", {{"n", 1}});
  const auto took = real.Now() - start;
  api.release.Notify();
  ASSERT_TRUE(r.error.has_value());
  // libcurl's timer may fire a fraction of a millisecond before the gate
  // closes by our clock (failing closed early is safe): the reason is still
  // the gate's, since the gate set the limit.
  EXPECT_EQ(r.error->reason, kReasonNotLeader) << r.error->message;
  EXPECT_LT(took, 30s) << "ended by the gate's time left, not by request_timeout (60 s)";
}

TEST_F(KubeHttpClientTest, CloseAbortsReadsInFlightAndRefusesEveryRequest) {
  CountingApi api(srv_);
  HangingWatch(srv_, /*first_event=*/false);
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  std::optional<Result> read, watch;
  std::thread reader([&] { read = client.Get("/slow"); });
  std::stop_source stop;
  std::thread watcher([&] {
    watch = client.Watch(
        "/hang", [](const WatchEvent&) { return true; }, stop.get_token());
  });
  ASSERT_TRUE(api.in_slow.Wait());
  client.Close();
  reader.join();
  watcher.join();
  api.release.Notify();
  ASSERT_TRUE(read && read->error);
  EXPECT_EQ(read->error->reason, kReasonClosed);
  EXPECT_EQ(read->error->message, "aborted in flight: the client is closed");
  ASSERT_TRUE(watch.has_value());
  const Result after = client.Get("/x");
  ASSERT_TRUE(after.error.has_value());
  EXPECT_EQ(after.error->message, "not sent: the client is closed");
  EXPECT_EQ(api.Seen(), (std::vector<std::string>{"GET slow"}));
}

TEST_F(KubeHttpClientTest, BeforeCallsEndAtTheirDeadline) {
  CountingApi api(srv_);
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  // Past deadline: not sent.
  Result r = client.Get("/x", clock_.Now());
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->reason, kReasonDeadline);
  EXPECT_TRUE(api.Seen().empty());
  // In flight when the deadline comes (virtual time): aborted.
  std::optional<Result> slow;
  std::thread t([&] { slow = client.Update("/slow", {{"n", 1}}, clock_.Now() + 2s); });
  ASSERT_TRUE(api.in_slow.Wait());
  clock_.Advance(2s);
  t.join();
  api.release.Notify();
  ASSERT_TRUE(slow && slow->error);
  EXPECT_EQ(slow->error->reason, kReasonDeadline);
  EXPECT_EQ(slow->error->message, "aborted in flight: the request's deadline has passed");
  // Within its deadline it goes through.
  EXPECT_TRUE(client.Create("/x", {{"n", 2}}, clock_.Now() + 2s).ok());
}

TEST_F(KubeHttpClientTest, BeforeCallsRefuseToWaitForTheRateLimiterPastTheirDeadline) {
  CountingApi api(srv_);
  srv_.Start();
  RestConfig cfg = Config();
  cfg.qps = 0.1;  // one token per 10 s
  cfg.burst = 1;
  HttpClient client(cfg, clock_, metrics_);
  EXPECT_TRUE(client.Get("/x", clock_.Now() + 5s).ok());
  const Result r = client.Get("/x", clock_.Now() + 5s);  // the next token comes in 10 s
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->reason, kReasonDeadline);
  EXPECT_EQ(api.Seen().size(), 1u);
}

TEST(KubeHttpClientHelpers, GroupVersionOfPaths) {
  EXPECT_EQ(GroupVersionOf("/api/v1/namespaces/a/services/b"), "v1");
  EXPECT_EQ(GroupVersionOf("/api/v1"), "v1");
  EXPECT_EQ(GroupVersionOf("/apis/apps/v1/deployments?watch=true"), "apps/v1");
  EXPECT_EQ(GroupVersionOf("/apis/modelops.dev/v1/namespaces/a/modelservices/b/status"), "modelops.dev/v1");
  EXPECT_EQ(GroupVersionOf("/apis/apps"), "");
  EXPECT_EQ(GroupVersionOf("/version"), "");
  EXPECT_EQ(GroupVersionOf(""), "");
}

TEST(KubeHttpClientHelpers, HostPortAndPatchTypes) {
  EXPECT_EQ(HostPort("https://10.0.0.1:6443"), "10.0.0.1:6443");
  EXPECT_EQ(HostPort("https://api.example.com/prefix/x"), "api.example.com:443");
  EXPECT_EQ(HostPort("http://localhost"), "localhost:80");
  EXPECT_EQ(HostPort("https://[fd00::1]:6443"), "[fd00::1]:6443");
  EXPECT_EQ(HostPort("https://[fd00::1]"), "[fd00::1]:443");
  EXPECT_STREQ(PatchContentType(PatchType::kMerge), "application/merge-patch+json");
}

}  // namespace
}  // namespace ms::kube

namespace ms::kube {
namespace {

// TLS: a CA, a server certificate for 127.0.0.1 and a client certificate,
// made with the openssl command line; the server requires the client
// certificate (as a kube-apiserver with --client-ca-file does).
class KubeHttpClientTlsTest : public ::testing::Test {
 protected:
  // The certificates are made once for the suite (openssl takes a while).
  static void SetUpTestSuite() {
    std::string tmpl = (fs::temp_directory_path() / "kube_tls_test.XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) return;
    dir_ = tmpl;
    const std::string d = dir_.string();
    const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    const std::string script =
        "cd " + d + " && printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext" + " && openssl req -x509" + key +
        " -keyout ca.key -out ca.crt -days 1 -subj /CN=test-ca" + " && openssl req" + key +
        " -keyout server.key -out server.csr -subj /CN=127.0.0.1" +
        " && openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 1"
        " -extfile san.ext" +
        " && openssl req" + key + " -keyout client.key -out client.csr -subj /O=system:masters/CN=admin" +
        " && openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days 1";
    have_certs_ = std::system((script + " >/dev/null 2>&1").c_str()) == 0;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  void SetUp() override {
    if (!have_certs_) GTEST_SKIP() << "openssl command line unavailable";
    server_ = std::make_unique<httplib::SSLServer>((dir_ / "server.crt").c_str(), (dir_ / "server.key").c_str(),
                                                   (dir_ / "ca.crt").c_str());
    ASSERT_TRUE(server_->is_valid());
    server_->set_tcp_nodelay(true);
    server_->Get("/version", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"major":"1","minor":"34"})", "application/json");
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = test::ServeInBackground(*server_);
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  std::string Read(const char* name) { return process::ReadFile((dir_ / name).string()); }
  RestConfig Config(bool with_ca, bool with_client_cert) {
    RestConfig c;
    c.server = "https://127.0.0.1:" + std::to_string(port_);
    if (with_ca) c.ca_pem = Read("ca.crt");
    if (with_client_cert) {
      c.client_cert_pem = Read("client.crt");
      c.client_key_pem = Read("client.key");
    }
    return c;
  }

  static inline fs::path dir_;
  static inline bool have_certs_ = false;
  std::unique_ptr<httplib::SSLServer> server_;
  int port_ = 0;
  std::thread thread_;
  FakeClock clock_;
  metrics::Registry registry_;
  ClientMetrics metrics_{registry_};
};

TEST_F(KubeHttpClientTlsTest, CaAndClientCertificateFromMemory) {
  HttpClient client(Config(true, true), clock_, metrics_);
  Result r = client.Get("/version");
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(r.body["minor"], "34");
  EXPECT_TRUE(client.Get("/version").ok());  // a second request on the pooled handle
}

TEST_F(KubeHttpClientTlsTest, UnknownServerCaIsRejected) {
  HttpClient client(Config(false, true), clock_, metrics_);
  Result r = client.Get("/version");
  EXPECT_EQ(r.code, 0);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->reason, "Transport");
}

TEST_F(KubeHttpClientTlsTest, InsecureSkipVerifyAcceptsUnknownCa) {
  RestConfig cfg = Config(false, true);
  cfg.insecure_skip_tls_verify = true;
  HttpClient client(cfg, clock_, metrics_);
  EXPECT_TRUE(client.Get("/version").ok());
}

TEST_F(KubeHttpClientTlsTest, MissingClientCertificateFails) {
  HttpClient client(Config(true, false), clock_, metrics_);
  Result r = client.Get("/version");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.code, 0);
}

}  // namespace
}  // namespace ms::kube
