// Retry-After from the API server (429 Too Many Requests from Priority and
// Fairness, 503 from a server shutting down or overloaded) is honoured by
// the client: it waits as long as the header says, in the client's Clock
// (virtual time here), and sends the request again; a real HTTP server on
// loopback plays the API server.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "controller/kube/curl_handles.h"
#include "controller/kube/http_client.h"
#include "shared/metrics/metrics.h"
#include "test/support/fake_clock.h"
#include "test/support/http_test_server.h"

namespace ms::kube {
namespace {

const kube::curl::GlobalInit kCurl;

using namespace std::chrono_literals;

class RetryAfterTest : public ::testing::Test {
 protected:
  RestConfig Config() {
    RestConfig c;
    c.server = srv_.url();
    return c;
  }
  // The first `refusals` requests to `path` get `code` with `retry_after`
  // (none when empty), the rest 200 with {"n": <request number to `path`>}.
  void Refuse(const std::string& path, int refusals, int code, std::string retry_after) {
    auto handler = [this, refusals, code, retry_after, seen = std::make_shared<std::atomic<int>>(0)](
                       const httplib::Request& req, httplib::Response& res) {
      const int n = ++*seen;
      ++calls_;
      {
        std::lock_guard<std::mutex> g(mu_);
        bodies_.push_back(req.body);
      }
      clock_.Notify();
      if (n > refusals) {
        res.set_content(R"({"n":)" + std::to_string(n) + "}", "application/json");
        return;
      }
      res.status = code;
      if (!retry_after.empty()) res.set_header("Retry-After", retry_after);
      res.set_content(R"({"kind":"Status","status":"Failure","reason":"TooManyRequests","message":"slow down"})",
                      "application/json");
    };
    srv_.server.Get(path, handler);
    srv_.server.Post(path, handler);
  }

  test::HttpTestServer srv_;
  FakeClock clock_;
  metrics::Registry registry_;
  ClientMetrics metrics_{registry_};
  std::atomic<int> calls_{0};
  std::mutex mu_;
  std::vector<std::string> bodies_;
};

TEST_F(RetryAfterTest, TooManyRequestsIsSentAgainAfterTheSecondsTheServerSays) {
  Refuse("/r", 2, 429, "2");
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  Result r;
  std::thread t([&] { r = client.Get("/r"); });
  ASSERT_TRUE(clock_.AwaitWaiters(1));  // waiting after the first 429
  EXPECT_EQ(calls_.load(), 1);
  clock_.Advance(1999ms);
  ASSERT_TRUE(clock_.AwaitWaiters(1));  // still waiting: not sent again early
  EXPECT_EQ(calls_.load(), 1);
  clock_.Advance(1ms);
  ASSERT_TRUE(clock_.Eventually([&] { return calls_.load() == 2 && clock_.waiters() == 1; }));
  clock_.Advance(2s);
  t.join();
  ASSERT_TRUE(r.ok()) << r.Text();
  EXPECT_EQ(r.body["n"], 3);
  EXPECT_EQ(calls_.load(), 3);
}

TEST_F(RetryAfterTest, ServiceUnavailableWriteIsSentAgainWithTheSameBody) {
  Refuse("/apis/modelops.dev/v1/namespaces/ns/modelservices", 1, 503, "1");
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  Result r;
  std::thread t([&] { r = client.Create("/apis/modelops.dev/v1/namespaces/ns/modelservices", {{"k", "v"}}); });
  ASSERT_TRUE(clock_.AwaitWaiters(1));
  clock_.Advance(1s);
  t.join();
  ASSERT_TRUE(r.ok()) << r.Text();
  EXPECT_EQ(calls_.load(), 2);
  std::lock_guard<std::mutex> g(mu_);
  EXPECT_EQ(bodies_, (std::vector<std::string>{R"({"k":"v"})", R"({"k":"v"})"}));
}

TEST_F(RetryAfterTest, WithoutRetryAfterTheAnswerIsTheResult) {
  Refuse("/r", 1, 429, "");
  Refuse("/down", 1, 503, "");
  Refuse("/bad", 1, 400, "1");  // not a code Retry-After applies to
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  Result r = client.Get("/r");
  EXPECT_EQ(r.code, 429);
  EXPECT_EQ(r.error->reason, "TooManyRequests");
  EXPECT_EQ(client.Get("/down").code, 503);
  EXPECT_EQ(client.Get("/bad").code, 400);
  EXPECT_EQ(calls_.load(), 3);
  EXPECT_EQ(clock_.waits(), 0u);
}

TEST_F(RetryAfterTest, AWaitPastTheDeadlineIsNotMade) {
  Refuse("/r", 1, 429, "5");
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  Result r = client.Get("/r", clock_.Now() + 3s);
  EXPECT_EQ(r.code, 429);
  EXPECT_EQ(calls_.load(), 1);
  EXPECT_EQ(clock_.waits(), 0u);
}

TEST_F(RetryAfterTest, AnHttpDateIsUnderstoodAndEveryWaitIsCapped) {
  Refuse("/r", 1, 429, "Fri, 31 Dec 2100 23:59:59 GMT");  // decades: capped at kMaxRetryAfter
  Refuse("/past", 1, 503, "Wed, 21 Oct 2015 07:28:00 GMT");
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  EXPECT_TRUE(client.Get("/past").ok());  // a date past: at once
  EXPECT_EQ(clock_.waits(), 0u);
  Result r;
  std::thread t([&] { r = client.Get("/r"); });
  ASSERT_TRUE(clock_.AwaitWaiters(1));
  clock_.Advance(kMaxRetryAfter - 1s);
  ASSERT_TRUE(clock_.AwaitWaiters(1));
  EXPECT_EQ(calls_.load(), 3);
  clock_.Advance(1s);
  t.join();
  EXPECT_TRUE(r.ok()) << r.Text();
  EXPECT_EQ(calls_.load(), 4);
}

TEST_F(RetryAfterTest, RetriesStopAfterKMaxRetries) {
  Refuse("/r", 1000, 429, "0");
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  Result r = client.Get("/r");
  EXPECT_EQ(r.code, 429);
  EXPECT_EQ(calls_.load(), 1 + kMaxRetries);
}

TEST_F(RetryAfterTest, CloseEndsTheWait) {
  Refuse("/r", 1, 429, "30");
  srv_.Start();
  HttpClient client(Config(), clock_, metrics_);
  Result r;
  std::thread t([&] { r = client.Get("/r"); });
  ASSERT_TRUE(clock_.AwaitWaiters(1));
  client.Close();
  t.join();
  EXPECT_EQ(r.code, 429);
  EXPECT_EQ(calls_.load(), 1);
}

}  // namespace
}  // namespace ms::kube
