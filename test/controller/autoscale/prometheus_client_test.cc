#include "controller/autoscale/prometheus_client.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "controller/autoscale/promql.h"
#include "controller/kube/curl_handles.h"
#include "test/support/http_test_server.h"

namespace ms::autoscale {
namespace {

// libcurl's global set-up, as main does, before any test starts a thread.
const kube::curl::GlobalInit kCurl;
// Times the credentials' re-reads, which these tests do not use.
const clock::SystemClock kClock;

using namespace std::chrono_literals;
using ::testing::HasSubstr;

const char* kVectorOne =
    R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000.123,"12.5"]}]}})";

// ---- ParseQueryResponse, no network ----

TEST(AutoscalePrometheusParse, VectorAndScalar) {
  auto r = ParseQueryResponse(200, kVectorOne);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_DOUBLE_EQ(r.value, 12.5);
  r = ParseQueryResponse(200, R"({"status":"success","data":{"resultType":"scalar","result":[1700000000,"3"]}})");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_DOUBLE_EQ(r.value, 3);
  r = ParseQueryResponse(200, R"({"status":"success","data":{"resultType":"scalar","result":[1,"1e3"]}})");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_DOUBLE_EQ(r.value, 1000);
  r = ParseQueryResponse(200, R"({"status":"success","data":{"resultType":"scalar","result":[1,"-2"]}})");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_DOUBLE_EQ(r.value, -2);
  r = ParseQueryResponse(200, R"({"status":"success","data":{"resultType":"scalar","result":[1,4.5]}})");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_DOUBLE_EQ(r.value, 4.5);
}

TEST(AutoscalePrometheusParse, SeveralSeriesAreSummed) {
  auto r = ParseQueryResponse(200, R"({"status":"success","data":{"resultType":"vector","result":[
      {"metric":{"pod":"a"},"value":[1,"1"]},{"metric":{"pod":"b"},"value":[1,"2.5"]},
      {"metric":{"pod":"c"},"value":[1,"0"]}]}})");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_DOUBLE_EQ(r.value, 3.5);
}

TEST(AutoscalePrometheusParse, UnavailableValues) {
  auto vec = [](const std::string& v) {
    return R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"pod":"a"},"value":[1,")" + v +
           R"("]}]}})";
  };
  for (const char* v : {"NaN", "+Inf", "-Inf", "Inf"}) {
    auto r = ParseQueryResponse(200, vec(v));
    EXPECT_FALSE(r.ok) << v;
    EXPECT_FALSE(r.error.empty());
  }
  EXPECT_THAT(ParseQueryResponse(200, vec("NaN")).error, HasSubstr("NaN"));
  EXPECT_THAT(ParseQueryResponse(200, vec("NaN")).error, HasSubstr("pod"));  // names the series
  EXPECT_THAT(ParseQueryResponse(200, vec("+Inf")).error, HasSubstr("+Inf"));
  EXPECT_THAT(ParseQueryResponse(200, vec("1e999")).error, HasSubstr("Inf"));
  EXPECT_THAT(ParseQueryResponse(200, vec("twelve")).error, HasSubstr("malformed"));
  EXPECT_THAT(ParseQueryResponse(200, vec("")).error, HasSubstr("malformed"));
  EXPECT_THAT(ParseQueryResponse(200, vec("12abc")).error, HasSubstr("malformed"));
  // One NaN among good series spoils the sum.
  auto r = ParseQueryResponse(200, R"({"status":"success","data":{"resultType":"vector","result":[
      {"metric":{},"value":[1,"1"]},{"metric":{},"value":[1,"NaN"]}]}})");
  EXPECT_FALSE(r.ok);
  // A sum overflowing to infinity.
  r = ParseQueryResponse(200, R"({"status":"success","data":{"resultType":"vector","result":[
      {"metric":{},"value":[1,"1.7e308"]},{"metric":{},"value":[1,"1.7e308"]}]}})");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("overflow"));
  r = ParseQueryResponse(200, R"({"status":"success","data":{"resultType":"scalar","result":[1,"NaN"]}})");
  EXPECT_FALSE(r.ok);
}

TEST(AutoscalePrometheusParse, EmptyVectorIsNoSeries) {
  auto r = ParseQueryResponse(200, R"({"status":"success","data":{"resultType":"vector","result":[]}})");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("no series"));
}

TEST(AutoscalePrometheusParse, ErrorsAreSurfaced) {
  auto r =
      ParseQueryResponse(400, R"({"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected"})");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("HTTP 400"));
  EXPECT_THAT(r.error, HasSubstr("bad_data"));
  EXPECT_THAT(r.error, HasSubstr("1:5: parse error: unexpected"));
  r = ParseQueryResponse(200, R"({"status":"error","errorType":"timeout","error":"query timed out"})");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("timeout: query timed out"));
  r = ParseQueryResponse(500, "internal\nboom");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("HTTP 500"));
  EXPECT_THAT(r.error, HasSubstr("internal boom"));  // control chars flattened
  EXPECT_TRUE(r.unreachable) << "a 5xx is the endpoint's failure (the breaker counts it)";
  r = ParseQueryResponse(503, "");
  EXPECT_EQ(r.error, "HTTP 503");
  EXPECT_TRUE(r.unreachable);
  EXPECT_FALSE(ParseQueryResponse(400, R"({"status":"error","errorType":"bad_data","error":"x"})").unreachable)
      << "Prometheus answered: the query failed, not the endpoint";
  EXPECT_FALSE(
      ParseQueryResponse(200, R"({"status":"success","data":{"resultType":"vector","result":[]}})").unreachable);
  // A 2xx that is not the API.
  EXPECT_THAT(ParseQueryResponse(200, "<html>").error, HasSubstr("invalid JSON"));
  EXPECT_THAT(ParseQueryResponse(200, "[1,2]").error, HasSubstr("invalid JSON"));
  EXPECT_THAT(ParseQueryResponse(200, R"({"status":"weird"})").error, HasSubstr("unexpected status"));
  EXPECT_THAT(ParseQueryResponse(200, R"({"status":"success"})").error, HasSubstr("no data"));
  EXPECT_THAT(ParseQueryResponse(200, R"({"status":"success","data":{"resultType":"vector"}})").error,
              HasSubstr("no data.result"));
  EXPECT_THAT(ParseQueryResponse(200, R"({"status":"success","data":{"resultType":"matrix","result":[]}})").error,
              HasSubstr("unsupported resultType \"matrix\""));
  EXPECT_THAT(ParseQueryResponse(200, R"({"status":"success","data":{"resultType":"string","result":[1,"x"]}})").error,
              HasSubstr("unsupported"));
  EXPECT_THAT(ParseQueryResponse(200, R"({"status":"success","data":{"resultType":"scalar","result":[1]}})").error,
              HasSubstr("malformed"));
  EXPECT_THAT(ParseQueryResponse(200, R"({"status":"success","data":{"resultType":"vector","result":[{}]}})").error,
              HasSubstr("malformed"));
  EXPECT_THAT(ParseQueryResponse(200, R"({"status":"success","data":{"resultType":"vector","result":{}}})").error,
              HasSubstr("malformed"));
}

TEST(AutoscalePrometheusUrl, EncodingAndPrefixes) {
  EXPECT_EQ(QueryUrl("http://p:9090", "sum(q{a=\"b c\"})"),
            "http://p:9090/api/v1/query?query=sum%28q%7Ba%3D%22b%20c%22%7D%29");
  EXPECT_EQ(QueryUrl("http://p:9090", "up"), "http://p:9090/api/v1/query?query=up");
  EXPECT_EQ(QueryUrl("http://p:9090/", "up"), "http://p:9090/api/v1/query?query=up");
  EXPECT_EQ(QueryUrl("http://p/prom//", "up"), "http://p/prom/api/v1/query?query=up");
  EXPECT_EQ(QueryUrl("https://p/a/b", "x{a=\"b\"}"), "https://p/a/b/api/v1/query?query=x%7Ba%3D%22b%22%7D");
}

// ---- PrometheusClient against a real HTTP server on 127.0.0.1 ----

// Answers GET <prefix>/api/v1/query by the `query` parameter:
//   "case:<name>" -> canned answers; anything else -> echoes it back as a
//   scalar of its length (and records it).
class FakePrometheus {
 public:
  explicit FakePrometheus(const std::string& prefix) {
    server_.Get(prefix + "/api/v1/query",
                [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = test::ServeInBackground(server_);
  }
  ~FakePrometheus() {
    {
      std::lock_guard<std::mutex> g(mu_);
      released_ = true;
    }
    cv_.notify_all();
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  std::string url(const std::string& path = "") const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  std::string last_query() {
    std::lock_guard<std::mutex> g(mu_);
    return last_query_;
  }
  int hits() {
    std::lock_guard<std::mutex> g(mu_);
    return hits_;
  }

 private:
  void Handle(const httplib::Request& req, httplib::Response& res) {
    const std::string q = req.get_param_value("query");
    {
      std::lock_guard<std::mutex> g(mu_);
      last_query_ = q;
      ++hits_;
    }
    static const std::map<std::string, std::pair<int, std::string>> kCanned = {
        {"case:success", {200, kVectorOne}},
        {"case:scalar", {200, R"({"status":"success","data":{"resultType":"scalar","result":[1700000000,"7"]}})"}},
        {"case:multi",
         {200, R"({"status":"success","data":{"resultType":"vector","result":[)"
               R"({"metric":{"pod":"a"},"value":[1,"2"]},{"metric":{"pod":"b"},"value":[1,"3"]}]}})"}},
        {"case:empty", {200, R"({"status":"success","data":{"resultType":"vector","result":[]}})"}},
        {"case:nan",
         {200, R"({"status":"success","data":{"resultType":"vector","result":[)"
               R"({"metric":{},"value":[1,"NaN"]}]}})"}},
        {"case:inf",
         {200, R"({"status":"success","data":{"resultType":"vector","result":[)"
               R"({"metric":{},"value":[1,"+Inf"]}]}})"}},
        {"case:error",
         {400, R"({"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": 1:4: parse error"})"}},
        {"case:500", {500, "upstream exploded"}},
        {"case:big", {200, std::string(4096, ' ') + kVectorOne}},
    };
    if (q == "case:slow") {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, 5s, [this] { return released_; });
      res.set_content(kVectorOne, "application/json");
      return;
    }
    auto it = kCanned.find(q);
    if (it != kCanned.end()) {
      res.status = it->second.first;
      res.set_content(it->second.second, it->second.first == 500 ? "text/plain" : "application/json");
      return;
    }
    res.set_content(
        R"({"status":"success","data":{"resultType":"scalar","result":[1,")" + std::to_string(q.size()) + R"("]}})",
        "application/json");
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  std::string last_query_;
  int hits_ = 0;
};

PrometheusClientOptions FastOptions() {
  PrometheusClientOptions o;
  o.timeout = 300ms;
  o.connect_timeout = 300ms;
  o.no_proxy = "*";
  return o;
}

TEST(AutoscalePrometheusClient, CannedAnswers) {
  FakePrometheus prom("/prom");
  ASSERT_GT(prom.port(), 0);
  PrometheusClient client(prom.url("/prom"), FastOptions(), kClock);

  auto r = client.Query("case:success");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_DOUBLE_EQ(r.value, 12.5);

  r = client.Query("case:scalar");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_DOUBLE_EQ(r.value, 7);

  r = client.Query("case:multi");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_DOUBLE_EQ(r.value, 5);

  r = client.Query("case:empty");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("no series"));

  r = client.Query("case:nan");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("NaN"));

  r = client.Query("case:inf");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("+Inf"));

  r = client.Query("case:error");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("HTTP 400"));
  EXPECT_THAT(r.error, HasSubstr("bad_data"));
  EXPECT_THAT(r.error, HasSubstr("1:4: parse error"));

  r = client.Query("case:500");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("HTTP 500"));
  EXPECT_THAT(r.error, HasSubstr("upstream exploded"));
}

TEST(AutoscalePrometheusClient, QueryIsUrlEncodedAndArrivesIntact) {
  FakePrometheus prom("");
  PrometheusClient client(prom.url(), FastOptions(), kClock);
  const std::string q = RenderQuery(kDefaultQueryTemplate, "ns&x=1", "a+b #c%20\"}\n\\ é");
  auto r = client.Query(q);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(prom.last_query(), q);
  EXPECT_DOUBLE_EQ(r.value, static_cast<double>(q.size()));
}

TEST(AutoscalePrometheusClient, BaseUrlWithOrWithoutSlashAndPrefix) {
  FakePrometheus prom("/monitoring/prometheus");
  for (const std::string base : {"/monitoring/prometheus", "/monitoring/prometheus/", "/monitoring/prometheus//"}) {
    PrometheusClient client(prom.url(base), FastOptions(), kClock);
    auto r = client.Query("case:success");
    ASSERT_TRUE(r.ok) << base << ": " << r.error;
    EXPECT_DOUBLE_EQ(r.value, 12.5);
  }
  EXPECT_EQ(prom.hits(), 3);
  // Without the prefix the server answers 404.
  PrometheusClient wrong(prom.url("/"), FastOptions(), kClock);
  auto r = wrong.Query("case:success");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("HTTP 404"));
}

TEST(AutoscalePrometheusClient, SlowServerTimesOut) {
  FakePrometheus prom("");
  PrometheusClient client(prom.url(), FastOptions(), kClock);
  const auto start = std::chrono::steady_clock::now();
  auto r = client.Query("case:slow");
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("Timeout was reached (timeout 300 ms)")) << "no varying byte counts";
  EXPECT_TRUE(r.unreachable);
  EXPECT_LT(took, 2s);
  EXPECT_GE(took, 250ms);
}

TEST(AutoscalePrometheusClient, ResponseSizeIsBounded) {
  FakePrometheus prom("");
  PrometheusClientOptions o = FastOptions();
  o.max_response_bytes = 1024;
  PrometheusClient client(prom.url(), o, kClock);
  auto r = client.Query("case:big");
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("larger than 1024 bytes"));
  o.max_response_bytes = 1 << 20;
  PrometheusClient roomy(prom.url(), o, kClock);
  r = roomy.Query("case:big");
  EXPECT_TRUE(r.ok) << r.error;
}

// A port that is bound but not listening: connecting is refused, and nobody
// else can take the port while the socket is open.
class RefusingPort {
 public:
  RefusingPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      socklen_t len = sizeof a;
      if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0) port_ = ntohs(a.sin_port);
    }
  }
  ~RefusingPort() {
    if (fd_ >= 0) ::close(fd_);
  }
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST(AutoscalePrometheusClient, ConnectionRefused) {
  RefusingPort refusing;
  ASSERT_GT(refusing.port(), 0);
  PrometheusClient client("http://127.0.0.1:" + std::to_string(refusing.port()), FastOptions(), kClock);
  auto r = client.Query("up");
  EXPECT_FALSE(r.ok);
  // libcurl's own text says how long the attempt took ("after 0 ms"): left
  // out, so that the same failure reads the same each time (status messages
  // are built from it and compared to avoid writes).
  const std::string port = std::to_string(refusing.port());
  EXPECT_EQ(r.error, "GET http://127.0.0.1:" + port + " failed: Failed to connect to 127.0.0.1 port " + port +
                         ": Couldn't connect to server");
  EXPECT_TRUE(r.unreachable);
}

TEST(AutoscalePrometheusClient, InvalidBaseUrl) {
  for (const char* base : {"", "prometheus:9090", "ftp://x/", "file:///etc/passwd"}) {
    PrometheusClient client(base, FastOptions(), kClock);
    auto r = client.Query("up");
    EXPECT_FALSE(r.ok) << base;
    EXPECT_THAT(r.error, HasSubstr("invalid Prometheus URL")) << base;
  }
}

TEST(AutoscalePrometheusClient, ConcurrentQueries) {
  FakePrometheus prom("");
  // The default time limits: this test is about concurrency, and 0.3 s per
  // request is not enough under ThreadSanitizer on a loaded machine.
  PrometheusClientOptions options = FastOptions();
  options.timeout = PrometheusClientOptions{}.timeout;
  options.connect_timeout = PrometheusClientOptions{}.connect_timeout;
  PrometheusClient client(prom.url(), options, kClock);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        if (client.Query("case:success").ok) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 40);
}

}  // namespace
}  // namespace ms::autoscale
