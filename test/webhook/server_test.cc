// The real HTTPS server on loopback, with certificates made by
// certs-scripts/gen-certs.sh, driven by libcurl and a raw OpenSSL client.
#include "webhook/server.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <spdlog/sinks/ostream_sink.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <sstream>
#include <thread>

#include "shared/log/logging.h"
#include "shared/process/files.h"
#include "test/support/fake_clock.h"
#include "test/support/log_capture.h"
#include "test/support/sanitizers.h"
#include "test/support/test_support.h"
#include "test/webhook/raw_tls.h"
#include "webhook/admission/mutating_handler.h"
#include "webhook/admission/validating_handler.h"

namespace ms::webhook {
namespace {

using nlohmann::json;

struct CurlHandle {
  CURL* h = curl_easy_init();
  ~CurlHandle() { curl_easy_cleanup(h); }
};
struct Slist {
  curl_slist* l = nullptr;
  ~Slist() { curl_slist_free_all(l); }
};

size_t Collect(char* p, size_t s, size_t n, void* ud) {
  static_cast<std::string*>(ud)->append(p, s * n);
  return s * n;
}

struct Reply {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string body;
  std::string error;
};

struct ClientOptions {
  std::string ca, cert, key;
  long ssl_version = CURL_SSLVERSION_TLSv1_2;
  long max_version = CURL_SSLVERSION_MAX_DEFAULT;
  std::string content_type = "application/json";
  bool chunked = false;
  bool expect_continue = false;  // curl's Expect: 100-continue (off by default here)
  std::string method = "POST";
};

Reply Request(CURL* h, const std::string& url, const std::string& body, const ClientOptions& o) {
  Reply r;
  char err[CURL_ERROR_SIZE] = {0};
  Slist headers;
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, err);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
  if (!o.ca.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, o.ca.c_str());
  if (!o.cert.empty()) curl_easy_setopt(h, CURLOPT_SSLCERT, o.cert.c_str());
  if (!o.key.empty()) curl_easy_setopt(h, CURLOPT_SSLKEY, o.key.c_str());
  curl_easy_setopt(h, CURLOPT_SSLVERSION, o.ssl_version | o.max_version);
  if (o.method == "POST") {
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  } else {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  }
  headers.l = curl_slist_append(headers.l, ("Content-Type: " + o.content_type).c_str());
  headers.l = curl_slist_append(headers.l, o.expect_continue ? "Expect: 100-continue" : "Expect:");
  if (o.chunked) headers.l = curl_slist_append(headers.l, "Transfer-Encoding: chunked");
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.l);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, Collect);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
  r.code = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
  r.error = err;
  return r;
}

Reply Request(const std::string& url, const std::string& body, const ClientOptions& o) {
  CurlHandle h;
  return Request(h.h, url, body, o);
}

std::string ReviewBody(const json& spec, const std::string& uid = "uid-1") {
  json object = {
      {"apiVersion", "modelops.dev/v1"}, {"kind", "ModelService"}, {"metadata", {{"name", "a"}}}, {"spec", spec}};
  return json{{"apiVersion", "admission.k8s.io/v1"},
              {"kind", "AdmissionReview"},
              {"request",
               {{"uid", uid},
                {"kind", {{"group", "modelops.dev"}, {"version", "v1"}, {"kind", "ModelService"}}},
                {"operation", "CREATE"},
                {"namespace", "default"},
                {"object", object}}}}
      .dump();
}

// Reads until the server ends the connection; returns the seconds it took.
double SecondsUntilClosed(RawTls& c) {
  const auto start = std::chrono::steady_clock::now();
  while (!c.ReadResponses(1000000).empty()) {
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string PostReview(const std::string& body, const std::string& extra_headers = "") {
  return "POST /validate?timeout=10s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + extra_headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// A plain TCP connection to 127.0.0.1:`port` (-1 on failure).
int ConnectTcp(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MakeCerts("");
    logger_ = log::MakeLogger("webhook-test", log::Format::kText, spdlog::level::warn);
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }
  void MakeCerts(const std::string& extra) {
    auto res = test::Run(std::string("bash ") + MS_SOURCE_DIR + "/certs-scripts/gen-certs.sh --out " + dir_.path() +
                         " --ip 127.0.0.1 " + extra);
    ASSERT_EQ(res.exit_code, 0) << res.output;
  }
  void Start(ServerOptions options = {}) {
    options.http.host = "127.0.0.1";
    options.http.port = 0;
    options.cert_file = dir_.File("tls.crt");
    options.key_file = dir_.File("tls.key");
    if (options.cert_poll_interval == std::chrono::milliseconds(1000))
      options.cert_poll_interval = std::chrono::milliseconds(50);
    server_ = std::make_unique<Server>(options, std::vector<const admission::Handler*>{&validating_, &mutating_},
                                       metrics_, logger_);
    std::string error;
    ASSERT_TRUE(server_->Start(&error)) << error;
  }
  std::string Url(const std::string& path) { return "https://127.0.0.1:" + std::to_string(server_->port()) + path; }
  ClientOptions Trusting() {
    ClientOptions o;
    o.ca = dir_.File("ca.crt");
    return o;
  }
  void ExpectServing() {
    auto r = Request(Url("/validate"), ReviewBody({{"model", "m"}}, "alive"), Trusting());
    ASSERT_EQ(r.code, CURLE_OK) << r.error;
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(json::parse(r.body)["response"]["uid"], "alive");
  }

  test::TempDir dir_;
  admission::ValidatingHandler validating_;
  admission::MutatingHandler mutating_;
  metrics::Registry registry_;
  WebhookMetrics metrics_{registry_};
  std::shared_ptr<spdlog::logger> logger_;
  std::unique_ptr<Server> server_;
};

TEST_F(ServerTest, ValidatesAndMutatesOverTls) {
  Start();
  auto r = Request(Url("/validate"), ReviewBody({{"model", "m"}, {"replicas", 0}}), Trusting());
  ASSERT_EQ(r.code, CURLE_OK) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body),
            json::parse(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"uid-1",
              "allowed":false,"status":{"metadata":{},"status":"Failure","code":422,"reason":"Invalid",
              "message":"spec.replicas: Invalid value: 0: must be between 1 and 100"}}})"));
  auto m = Request(Url("/mutate"), ReviewBody({{"model", "m"}}), Trusting());
  ASSERT_EQ(m.code, CURLE_OK) << m.error;
  auto resp = json::parse(m.body)["response"];
  EXPECT_EQ(resp["allowed"], true);
  EXPECT_EQ(resp["patchType"], "JSONPatch");

  auto text = metrics::Serialize(registry_);
  EXPECT_NE(text.find("controller_runtime_webhook_requests_total{code=\"200\",webhook=\"/validate\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          "modelservice_admission_decisions_total{decision=\"denied\",operation=\"CREATE\",webhook=\"/validate\"} 1\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("controller_runtime_webhook_latency_seconds_count{webhook=\"/mutate\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("controller_runtime_webhook_requests_in_flight{webhook=\"/mutate\"} 0\n"), std::string::npos);
}

// A denial is logged at info as one bounded line, in the text format too:
// a uid holding a newline cannot forge a second line (the message and the
// uid field escape it), and a denial with many errors is cut at the
// logger's bound with a marker saying how much was left out.
TEST_F(ServerTest, DenialsAreLoggedAsOneBoundedLine) {
  std::ostringstream os;
  logger_ = log::MakeLogger("webhook", log::Format::kText, spdlog::level::info,
                            std::make_shared<spdlog::sinks::ostream_sink_mt>(os));
  Start();
  json labels = json::object();
  for (int i = 0; i < 60; ++i) labels["-bad-key-" + std::to_string(i) + "-"] = "v";
  const std::string uid = "u1\n2026-01-01T00:00:00.000Z I webhook: allowed /validate CREATE forged";
  auto r = Request(Url("/validate"), ReviewBody({{"model", "m"}, {"podLabels", labels}}, uid), Trusting());
  ASSERT_EQ(r.code, CURLE_OK) << r.error;
  EXPECT_EQ(json::parse(r.body)["response"]["allowed"], false);
  server_->Stop();
  logger_->flush();
  const std::string text = os.str();
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find("denied") != std::string::npos || line.find("forged") != std::string::npos) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1u) << text;
  const std::string& line = lines[0];
  EXPECT_NE(line.find(" I webhook: denied /validate CREATE default/a (uid u1\\n2026-01-01T00:00:00.000Z I "
                      "webhook: allowed /validate CREATE forged, code 422): spec.podLabels: Invalid value: "),
            std::string::npos)
      << line;
  EXPECT_NE(line.find(" uid=\"u1\\n2026-01-01T00:00:00.000Z I webhook: allowed /validate CREATE forged\""),
            std::string::npos)
      << line;
  EXPECT_NE(line.find(" bytes] webhook=/validate "), std::string::npos) << line;
  EXPECT_LT(line.size(), log::kMaxMessageBytes + 1000) << line;
}

TEST_F(ServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  Start();
  CurlHandle h;
  long connects = 0;
  for (int i = 0; i < 50; ++i) {
    // append, not `"k" + std::to_string(i)`: GCC 12 at -O3 reports a false
    // -Wrestrict in the insert() that operator+(const char*, string&&) does.
    auto r = Request(h.h, Url("/validate"), ReviewBody({{"model", "m"}}, std::string("k").append(std::to_string(i))),
                     Trusting());
    ASSERT_EQ(r.code, CURLE_OK) << r.error;
    ASSERT_EQ(r.status, 200);
    long n = 0;
    curl_easy_getinfo(h.h, CURLINFO_NUM_CONNECTS, &n);
    connects += n;
  }
  EXPECT_EQ(connects, 1) << "the server closed keep-alive connections (cpp-httplib's default is 5 requests)";
}

// Quiesce (after SIGTERM, during --shutdown-delay): still served, but each
// answer closes its connection, so that no client holds an idle one when
// the server stops.
TEST_F(ServerTest, QuiescedServerAnswersAndClosesEachConnection) {
  Start();
  CurlHandle h;
  long connects = 0, n = 0;
  for (int i = 0; i < 2; ++i) {
    auto r = Request(h.h, Url("/validate"), ReviewBody({{"model", "m"}}, std::string("a").append(std::to_string(i))),
                     Trusting());
    ASSERT_EQ(r.status, 200) << r.error;
    curl_easy_getinfo(h.h, CURLINFO_NUM_CONNECTS, &n);
    connects += n;
  }
  EXPECT_EQ(connects, 1);
  server_->Quiesce();
  connects = 0;
  for (int i = 0; i < 3; ++i) {
    auto r = Request(h.h, Url("/validate"), ReviewBody({{"model", "m"}}, std::string("q").append(std::to_string(i))),
                     Trusting());
    ASSERT_EQ(r.code, CURLE_OK) << r.error;
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(json::parse(r.body)["response"]["allowed"], true);
    curl_easy_getinfo(h.h, CURLINFO_NUM_CONNECTS, &n);
    connects += n;
  }
  // The first went on the connection kept alive before; it and each after
  // it were closed after their answer, so the next two each opened one.
  EXPECT_EQ(connects, 2) << "a quiesced server kept a connection open after its answer";
}

// Label values from a request come from a closed set: 50 distinct operation
// strings make no new series (they were 50 series, kept forever).
TEST_F(ServerTest, OperationLabelComesFromAClosedSet) {
  Start();
  CurlHandle h;
  for (int i = 0; i < 50; ++i) {
    json review = json::parse(ReviewBody({{"model", "m"}}, "u" + std::to_string(i)));
    review["request"]["operation"] = "OP-" + std::to_string(i) + "-\xff";
    auto r = Request(h.h, Url("/validate"), review.dump(-1, ' ', false, json::error_handler_t::ignore), Trusting());
    ASSERT_EQ(r.code, CURLE_OK) << r.error;
  }
  auto series = [](const std::string& text) {
    size_t n = 0;
    for (size_t pos = 0; (pos = text.find("\nmodelservice_admission_decisions_total{", pos)) != std::string::npos;
         ++pos)
      ++n;
    return n;
  };
  const size_t before = series(metrics::Serialize(registry_));
  for (int i = 50; i < 100; ++i) {
    json review = json::parse(ReviewBody({{"model", "m"}}, "u" + std::to_string(i)));
    review["request"]["operation"] = "OP-" + std::to_string(i);
    ASSERT_EQ(Request(h.h, Url("/validate"), review.dump(), Trusting()).code, CURLE_OK);
  }
  const auto text = metrics::Serialize(registry_);
  EXPECT_EQ(series(text), before) << "new series from client-sent operations";
  EXPECT_EQ(text.find("OP-"), std::string::npos);
  EXPECT_NE(
      text.find(
          "modelservice_admission_decisions_total{decision=\"allowed\",operation=\"UNKNOWN\",webhook=\"/validate\"} "
          "100\n"),
      std::string::npos)
      << text;
}

TEST_F(ServerTest, BodyOverThreeMiBIs413AndServerStaysUp) {
  Start();
  std::string big(3 * 1024 * 1024 + 1, 'x');
  auto r = Request(Url("/validate"), big, Trusting());
  EXPECT_EQ(r.status, 413) << r.error;
  EXPECT_EQ(r.body.find("\"allowed\""), std::string::npos);
  ExpectServing();
  auto text = metrics::Serialize(registry_);
  EXPECT_NE(text.find("controller_runtime_webhook_requests_total{code=\"413\",webhook=\"/validate\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("modelservice_admission_decisions_total{decision=\"rejected\",operation=\"UNKNOWN\","
                      "webhook=\"/validate\"} 1\n"),
            std::string::npos)
      << text;
}

TEST_F(ServerTest, ChunkedBodyIsRefusedBeforeItIsRead) {
  Start();
  ClientOptions o = Trusting();
  o.chunked = true;
  auto r = Request(Url("/validate"), ReviewBody({{"model", "m"}}), o);
  EXPECT_EQ(r.status, 411) << r.error << r.body;
  ExpectServing();
}

TEST_F(ServerTest, WrongMethodAndContentType) {
  Start();
  ClientOptions get = Trusting();
  get.method = "GET";
  EXPECT_EQ(Request(Url("/validate"), "", get).status, 405);
  ClientOptions text = Trusting();
  text.content_type = "text/plain";
  auto r = Request(Url("/validate"), ReviewBody({{"model", "m"}}), text);
  EXPECT_EQ(r.status, 415);
  EXPECT_EQ(Request(Url("/nope"), "{}", Trusting()).status, 404);
}

TEST_F(ServerTest, NotJsonIs400WithPlainMessage) {
  Start();
  auto r = Request(Url("/mutate"), "{not json", Trusting());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body.rfind("request body is not valid JSON", 0), 0u) << r.body;
}

// A raw TLS client that sends the headers and half of the body, then stalls.
TEST_F(ServerTest, StalledClientTimesOutAndOthersAreServed) {
  ServerOptions o;
  o.http.limits.read_timeout = std::chrono::seconds(1);
  Start(o);
  const int fd = ConnectTcp(server_->port());
  ASSERT_GE(fd, 0);
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), SSL_free);
  SSL_set_fd(ssl.get(), fd);
  ASSERT_EQ(SSL_connect(ssl.get()), 1);
  std::string body = ReviewBody({{"model", "m"}});
  std::string head = "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                     std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, body.size() / 2);
  ASSERT_GT(SSL_write(ssl.get(), head.data(), static_cast<int>(head.size())), 0);

  // Meanwhile the server answers others.
  ExpectServing();

  // The stalled connection is closed by the server after its read timeout,
  // without a 200 answer.
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const auto start = std::chrono::steady_clock::now();
  char buf[4096];
  std::string got;
  int n;
  while (got.find("\r\n\r\n") == std::string::npos && (n = SSL_read(ssl.get(), buf, sizeof buf)) > 0)
    got.append(buf, n);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_LT(waited, std::chrono::seconds(4)) << "the server did not give up on a stalled request: " << got;
  EXPECT_EQ(got.rfind("HTTP/1.1 408 Request Timeout", 0), 0u) << got;
  close(fd);
  ExpectServing();
}

// A connection that never starts its handshake has the handshake timeout
// to do so (the worker's timer for it fires; nothing sweeps), then is closed.
TEST_F(ServerTest, AHandshakeNeverStartedIsDroppedAtTheHandshakeTimeout) {
  ServerOptions o;
  o.http.handshake_timeout = std::chrono::milliseconds(300);
  Start(o);
  const int fd = ConnectTcp(server_->port());
  ASSERT_GE(fd, 0);
  ExpectServing();  // meanwhile
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char c;
  EXPECT_EQ(recv(fd, &c, 1, 0), 0) << "closed by the server, not timed out here: " << std::strerror(errno);
  close(fd);
}

TEST_F(ServerTest, PlainHttpToTheTlsPortGetsA400SayingSoAndServerStaysUp) {
  Start();
  auto r = Request("http://127.0.0.1:" + std::to_string(server_->port()) + "/validate", ReviewBody({{"model", "m"}}),
                   ClientOptions{});
  EXPECT_EQ(r.status, 400) << r.error;
  EXPECT_EQ(r.body, "Client sent an HTTP request to an HTTPS server.\n");
  ExpectServing();
}

// Connections do not hold threads: far more keep-alive connections than
// event loops are all served at once.
TEST_F(ServerTest, ManyMoreConnectionsThanLoopsAreServedConcurrently) {
  ServerOptions o;
  o.http.threads = 2;
  Start(o);
  std::vector<std::unique_ptr<RawTls>> clients;
  for (int i = 0; i < 100; ++i) {
    clients.push_back(std::make_unique<RawTls>(server_->port()));
    ASSERT_TRUE(clients.back()->Handshake()) << "connection " << i;
  }
  // The uids are appended, not `"c" + std::to_string(i)` (see the GCC 12
  // -Wrestrict note in KeepAliveServesManyRequestsOnOneConnection).
  for (size_t i = 0; i < clients.size(); ++i)
    ASSERT_TRUE(
        clients[i]->Write(PostReview(ReviewBody({{"model", "m"}}, std::string("c").append(std::to_string(i))))));
  for (size_t i = 0; i < clients.size(); ++i) {
    const std::string got = clients[i]->ReadResponses(1);
    ASSERT_EQ(got.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << "connection " << i << ": " << got;
    EXPECT_NE(got.find(std::string("\"uid\":\"c").append(std::to_string(i)).append("\"")), std::string::npos) << got;
  }
}

// A client that sends and never reads: the server stops reading from it once
// its answers back up (nothing is buffered without bound), keeps serving
// others, and drops it when the answers have waited a read timeout.
TEST_F(ServerTest, ClientThatDoesNotReadIsDroppedAndOthersAreServed) {
#if defined(MS_TEST_TSAN)
  // Under TSan the hog's hundreds of MB of TLS writes take about a minute and
  // the close time below depends on the machine's load, not on the server.
  GTEST_SKIP() << "timing-bound under ThreadSanitizer's slowdown";
#endif
  ServerOptions o;
  o.http.limits.read_timeout = std::chrono::seconds(1);
  Start(o);
  RawTls hog(server_->port(), 4096, 2);
  ASSERT_TRUE(hog.Handshake());
  // Reviews until the writes time out: the server's socket buffers take a
  // few MB of answers before its writes block.
  std::string chunk;
  for (int i = 0; i < 100; ++i)
    chunk += PostReview(ReviewBody({{"model", "m"}}, std::string("hog-").append(std::to_string(i))));
  size_t sent = 0;
  const size_t cap = 256u << 20;
  while (sent < cap && hog.Write(chunk)) sent += chunk.size();
  EXPECT_LT(sent, cap) << "the server read everything although its answers were not read";
  ExpectServing();
  // SO_RCVTIMEO is 10 s: closing comes from the server, well before.
  EXPECT_LT(SecondsUntilClosed(hog), 8.0);
  ExpectServing();
}

// Out of file descriptors, accept() fails while the connection waits in the
// backlog: the server pauses accepting instead of spinning, and serves the
// connection once descriptors are free again.
TEST_F(ServerTest, OutOfDescriptorsPausesAcceptingThenServesTheWaitingConnection) {
#if defined(MS_TEST_ASAN)
  // The sanitizers' runtime opens files itself (UBSan's vptr check reads
  // /proc/self/maps) and reports false errors when it cannot.
  GTEST_SKIP() << "needs free descriptors for the sanitizer runtime";
#endif
  ServerOptions o;
  o.cert_poll_interval = std::chrono::hours(1);  // nothing else opens files meanwhile
  test::LogCapture log;                          // in memory: it opens no file
  logger_ = log.logger();
  Start(o);
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  const int lowest_free = dup(0);
  ASSERT_GE(lowest_free, 0);
  close(lowest_free);
  // The client's socket takes the last allowed descriptor; the server's
  // accept() finds none.
  rlimit low = old;
  low.rlim_cur = static_cast<rlim_t>(lowest_free) + 1;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  auto cpu_seconds = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  };
  RawTls c(server_->port());
  // Each failed accept pauses accepting for 100 ms (and says so): over the
  // three pauses after the first, the server must not spin on the listener.
  const std::string pause = "not accepting for 100ms";
  ASSERT_TRUE(log.AwaitLine(pause, 1));
  const double cpu_before = cpu_seconds();
  ASSERT_TRUE(log.AwaitLine(pause, 4));
  const double cpu_used = cpu_seconds() - cpu_before;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
  EXPECT_LT(cpu_used, 0.1) << "the server spun on a listener it could not accept from";
  ASSERT_TRUE(c.Handshake());
  ASSERT_TRUE(c.Write(PostReview(ReviewBody({{"model", "m"}}, "after-emfile"))));
  const std::string got = c.ReadResponses(1);
  EXPECT_EQ(got.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << got;
  EXPECT_NE(got.find("after-emfile"), std::string::npos) << got;
}

TEST_F(ServerTest, PipelinedReviewsAreAnsweredInOrderOnOneConnection) {
  Start();
  RawTls c(server_->port());
  ASSERT_TRUE(c.Handshake());
  ASSERT_TRUE(c.Write(PostReview(ReviewBody({{"model", "m"}}, "first")) +
                      PostReview(ReviewBody({{"model", "BAD MODEL"}}, "second")) +
                      PostReview(ReviewBody({{"model", "m"}}, "third"))));
  const std::string got = c.ReadResponses(3);
  const size_t first = got.find("\"uid\":\"first\""), second = got.find("\"uid\":\"second\""),
               third = got.find("\"uid\":\"third\"");
  ASSERT_NE(third, std::string::npos) << got;
  EXPECT_LT(first, second);
  EXPECT_LT(second, third);
  EXPECT_NE(got.find("\"code\":422"), std::string::npos) << got;
}

// A request OpenSSL has already read from the socket while the server had
// stopped reading (answers over max_queued_output waiting) is answered once
// the answers are sent: epoll does not report it again. It used to wait for
// the idle timeout, unanswered.
TEST_F(ServerTest, RequestBufferedBehindALargeAnswerIsAnswered) {
  ServerOptions o;
  o.http.max_queued_output = 64;  // below one answer
  Start(o);
  RawTls c(server_->port());
  ASSERT_TRUE(c.Handshake());
  ASSERT_TRUE(c.WriteRecordsTogether(
      {PostReview(ReviewBody({{"model", "m"}}, "first")), PostReview(ReviewBody({{"model", "m"}}, "second"))}));
  const std::string got = c.ReadResponses(2);
  EXPECT_EQ(RawTls::Complete(got), 2) << got;
  EXPECT_NE(got.find("\"uid\":\"second\""), std::string::npos) << got;
}

// Epoll is edge-triggered: a turn that spends its reads (reads_per_turn, 1
// here: 16 KiB) with bytes still in the socket must be driven again by the
// loop, since no event will come for them. Eight 20 KiB reviews sent at once
// need a dozen turns and arrive in a few TCP segments: without that, the
// answers stop after the first few.
TEST_F(ServerTest, ATurnThatSpendsItsReadsIsDrivenAgainWithoutAnEvent) {
  ServerOptions o;
  o.http.reads_per_turn = 1;
  Start(o);
  RawTls c(server_->port());
  ASSERT_TRUE(c.Handshake());
  std::vector<std::string> requests;
  for (int i = 1; i <= 8; ++i)
    requests.push_back(PostReview(std::string(20 * 1024, ' ') + ReviewBody({{"model", "m"}}, "r" + std::to_string(i))));
  ASSERT_TRUE(c.WriteRecordsTogether(requests));
  const std::string got = c.ReadResponses(8);
  EXPECT_EQ(RawTls::Complete(got), 8) << got;
  EXPECT_NE(got.find("\"uid\":\"r8\""), std::string::npos) << got;
}

TEST_F(ServerTest, ExpectContinueIsHonoured) {
  Start();
  ClientOptions o = Trusting();
  o.expect_continue = true;
  auto r = Request(Url("/validate"), ReviewBody({{"model", "m"}}), o);
  ASSERT_EQ(r.code, CURLE_OK) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body)["response"]["allowed"], true);
}

// Stop() lets a request that is arriving finish and be answered, closes
// idle connections, and refuses new ones.
TEST_F(ServerTest, StopAnswersTheRequestBeingReceivedThenCloses) {
  Start();
  RawTls idle(server_->port()), busy(server_->port());
  ASSERT_TRUE(idle.Handshake());
  ASSERT_TRUE(busy.Handshake());
  // With Expect: 100-continue the server says when it has the head: from
  // then on the connection is receiving a request, not idle.
  const std::string body = ReviewBody({{"model", "m"}}, "in-flight");
  const std::string request = PostReview(body, "Expect: 100-continue\r\n");
  const size_t half = request.size() - body.size() / 2;
  ASSERT_TRUE(busy.Write(request.substr(0, half)));
  ASSERT_EQ(busy.ReadResponses(1), "HTTP/1.1 100 Continue\r\n\r\n");
  std::thread stopper([this] { server_->Stop(); });
  // Waits until Stop() has closed the idle connection (or 10 s pass).
  EXPECT_EQ(idle.ReadResponses(1), "") << "an idle connection was not closed";
  ASSERT_TRUE(busy.Write(request.substr(half)));
  const std::string got = busy.ReadResponses(1);
  EXPECT_EQ(got.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << got;
  EXPECT_NE(got.find("\"uid\":\"in-flight\""), std::string::npos) << got;
  stopper.join();
  RawTls late(server_->port());
  EXPECT_FALSE(late.Handshake()) << "a connection was accepted after Stop()";
}

TEST_F(ServerTest, UntrustedClientCannotVerifyTheServer) {
  Start();
  auto r = Request(Url("/validate"), ReviewBody({{"model", "m"}}), ClientOptions{});  // system CAs only
  EXPECT_EQ(r.code, CURLE_PEER_FAILED_VERIFICATION) << r.error;
}

TEST_F(ServerTest, Tls11IsRefusedAndMinVersion13RefusesTls12) {
  Start();
  ClientOptions old = Trusting();
  old.ssl_version = CURL_SSLVERSION_TLSv1_1;
  old.max_version = CURL_SSLVERSION_MAX_TLSv1_1;
  EXPECT_NE(Request(Url("/validate"), ReviewBody({{"model", "m"}}), old).code, CURLE_OK);
  server_->Stop();
  server_.reset();

  ServerOptions o;
  o.tls.min_version = TLS1_3_VERSION;
  Start(o);
  ClientOptions tls12 = Trusting();
  tls12.max_version = CURL_SSLVERSION_MAX_TLSv1_2;
  EXPECT_NE(Request(Url("/validate"), ReviewBody({{"model", "m"}}), tls12).code, CURLE_OK);
  ExpectServing();  // TLS 1.3 works
}

TEST_F(ServerTest, ClientCertificateRequiredWhenClientCaIsSet) {
  MakeCerts("--reuse-ca --client apiserver");
  test::TempDir other;
  auto res = test::Run(std::string("bash ") + MS_SOURCE_DIR + "/certs-scripts/gen-certs.sh --out " + other.path() +
                       " --client intruder");
  ASSERT_EQ(res.exit_code, 0) << res.output;
  ServerOptions o;
  o.tls.client_ca_file = dir_.File("ca.crt");
  Start(o);
  auto none = Request(Url("/validate"), ReviewBody({{"model", "m"}}), Trusting());
  EXPECT_NE(none.code, CURLE_OK) << "a client without a certificate was served";
  ClientOptions foreign = Trusting();
  foreign.cert = other.File("intruder.crt");
  foreign.key = other.File("intruder.key");
  EXPECT_NE(Request(Url("/validate"), ReviewBody({{"model", "m"}}), foreign).code, CURLE_OK);
  ClientOptions good = Trusting();
  good.cert = dir_.File("apiserver.crt");
  good.key = dir_.File("apiserver.key");
  auto ok = Request(Url("/validate"), ReviewBody({{"model", "m"}}), good);
  ASSERT_EQ(ok.code, CURLE_OK) << ok.error;
  EXPECT_EQ(ok.status, 200);
}

// A client of TLS 1.2 or 1.3 that resumes a session, and what it reads.
struct Resumption {
  bool served = false;
  bool reused = false;
};

class SessionClient {
 public:
  SessionClient(int version, const std::string& ca, const std::string& cert, const std::string& key)
      : ctx_(SSL_CTX_new(TLS_client_method()), SSL_CTX_free) {
    SSL_CTX_set_min_proto_version(ctx_.get(), version);
    SSL_CTX_set_max_proto_version(ctx_.get(), version);
    SSL_CTX_load_verify_locations(ctx_.get(), ca.c_str(), nullptr);
    SSL_CTX_set_verify(ctx_.get(), SSL_VERIFY_PEER, nullptr);
    if (!cert.empty()) {
      SSL_CTX_use_certificate_file(ctx_.get(), cert.c_str(), SSL_FILETYPE_PEM);
      SSL_CTX_use_PrivateKey_file(ctx_.get(), key.c_str(), SSL_FILETYPE_PEM);
    }
  }
  ~SessionClient() { SSL_SESSION_free(session_); }

  // One connection, one review; keeps the session for the next connection.
  Resumption Once(int port) {
    Resumption r;
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx_.get()), SSL_free);
    SSL_set_fd(ssl.get(), fd);
    if (session_) SSL_set_session(ssl.get(), session_);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && SSL_connect(ssl.get()) == 1) {
      const std::string request = PostReview(ReviewBody({{"model", "m"}}, "resumed"));
      SSL_write(ssl.get(), request.data(), static_cast<int>(request.size()));
      std::string got;
      char buf[4096];
      while (RawTls::Complete(got) < 1) {
        const int n = SSL_read(ssl.get(), buf, sizeof buf);  // also takes TLS 1.3 tickets
        if (n <= 0) break;
        got.append(buf, static_cast<size_t>(n));
      }
      r.served = got.rfind("HTTP/1.1 200 OK\r\n", 0) == 0 && got.find("\"uid\":\"resumed\"") != std::string::npos;
      r.reused = SSL_session_reused(ssl.get()) == 1;
      SSL_SESSION_free(session_);
      session_ = SSL_get1_session(ssl.get());
      SSL_shutdown(ssl.get());
    }
    ERR_clear_error();
    close(fd);
    return r;
  }

 private:
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx_;
  SSL_SESSION* session_ = nullptr;
};

// Session resumption works with and without client certificates. With
// --client-ca every resumption failed with an internal_error alert ("session
// id context uninitialized").
TEST_F(ServerTest, SessionsResumeWithAndWithoutClientCertificates) {
  MakeCerts("--reuse-ca --client apiserver");
  for (const bool mtls : {false, true}) {
    ServerOptions o;
    if (mtls) o.tls.client_ca_file = dir_.File("ca.crt");
    Start(o);
    for (const int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
      SCOPED_TRACE(std::string(mtls ? "mTLS, " : "") + (version == TLS1_2_VERSION ? "TLS 1.2" : "TLS 1.3"));
      SessionClient client(version, dir_.File("ca.crt"), mtls ? dir_.File("apiserver.crt") : "",
                           mtls ? dir_.File("apiserver.key") : "");
      const Resumption first = client.Once(server_->port());
      EXPECT_TRUE(first.served);
      EXPECT_FALSE(first.reused);
      for (int i = 0; i < 3; ++i) {
        const Resumption again = client.Once(server_->port());
        EXPECT_TRUE(again.served) << "resumption " << i;
        EXPECT_TRUE(again.reused) << "resumption " << i;
      }
    }
    server_->Stop();
    server_.reset();
  }
}

// mTLS checks who the client is, not only who signed its certificate: a
// certificate from the same CA without an allowed name (CN or DNS SAN) is
// refused in the handshake.
TEST_F(ServerTest, ClientCertificateMustCarryAnAllowedName) {
  MakeCerts("--reuse-ca --client kube-apiserver");
  MakeCerts("--reuse-ca --client system:anonymous-pod");
  ClientOptions apiserver = Trusting(), pod = Trusting();
  apiserver.cert = dir_.File("kube-apiserver.crt");
  apiserver.key = dir_.File("kube-apiserver.key");
  pod.cert = dir_.File("system:anonymous-pod.crt");
  pod.key = dir_.File("system:anonymous-pod.key");
  ServerOptions o;
  o.tls.client_ca_file = dir_.File("ca.crt");
  o.tls.client_names = {"other-name", "kube-apiserver"};
  Start(o);
  auto ok = Request(Url("/validate"), ReviewBody({{"model", "m"}}), apiserver);
  ASSERT_EQ(ok.code, CURLE_OK) << ok.error;
  EXPECT_EQ(ok.status, 200);
  auto refused = Request(Url("/validate"), ReviewBody({{"model", "m"}}), pod);
  EXPECT_NE(refused.code, CURLE_OK) << "a certificate of the CA without an allowed name was served";
  server_->Stop();
  server_.reset();
  o.tls.client_names = {"*"};
  Start(o);
  EXPECT_EQ(Request(Url("/validate"), ReviewBody({{"model", "m"}}), pod).code, CURLE_OK);
}

// Session-ticket keys rotate (virtual time): a ticket of the previous key
// still resumes (and is replaced), one two keys old makes a full handshake.
TEST_F(ServerTest, SessionTicketKeysRotate) {
  for (const int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    SCOPED_TRACE(version == TLS1_2_VERSION ? "TLS 1.2" : "TLS 1.3");
    FakeClock clock;
    ServerOptions o;
    o.tls.clock = &clock;
    o.tls.ticket_key_rotation = std::chrono::hours(1);
    o.tls.session_max_age = std::chrono::hours(24);  // the keys' rule alone
    Start(o);
    SessionClient renewing(version, dir_.File("ca.crt"), "", ""), idle(version, dir_.File("ca.crt"), "", "");
    EXPECT_FALSE(renewing.Once(server_->port()).reused);
    EXPECT_FALSE(idle.Once(server_->port()).reused);
    EXPECT_TRUE(renewing.Once(server_->port()).reused);  // same key
    clock.Advance(std::chrono::hours(1));                // key 2 made; key 1 is the previous one
    const Resumption previous = renewing.Once(server_->port());
    EXPECT_TRUE(previous.served);
    EXPECT_TRUE(previous.reused) << "a ticket of the previous key did not resume";
    clock.Advance(std::chrono::hours(1));  // key 3; key 1 is gone
    const Resumption stale = idle.Once(server_->port());
    EXPECT_TRUE(stale.served);
    EXPECT_FALSE(stale.reused) << "a ticket two keys old resumed";
    EXPECT_TRUE(renewing.Once(server_->port()).reused) << "the ticket renewed with key 2 did not resume";
    server_->Stop();
    server_.reset();
  }
}

// A TLS 1.3 resumption issues a new ticket, and OpenSSL dates each resumed
// session anew: a chain of resumptions kept a session (and the client
// certificate its full handshake verified) for ever (issue 41). Now no
// session resumes past --tls-session-max-age from its full handshake, and a
// connection whose session is older answers its next request and closes.
TEST_F(ServerTest, NoSessionResumesOrServesPastItsMaxAgeFromTheFullHandshake) {
  for (const int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    SCOPED_TRACE(version == TLS1_2_VERSION ? "TLS 1.2" : "TLS 1.3");
    FakeClock clock;
    ServerOptions o;
    o.tls.clock = &clock;
    o.tls.session_max_age = std::chrono::seconds(10);
    Start(o);
    SessionClient client(version, dir_.File("ca.crt"), "", "");
    EXPECT_FALSE(client.Once(server_->port()).reused);
    RawTls kept(server_->port());
    ASSERT_TRUE(kept.Handshake());
    // Answered: the server has finished its side of the handshake (the
    // client's ends first in TLS 1.3) before the clock moves.
    ASSERT_TRUE(kept.Write(PostReview(ReviewBody({{"model", "m"}}, "new"))));
    EXPECT_EQ(kept.ReadResponses(1).find("Connection: close"), std::string::npos);
    clock.Advance(std::chrono::seconds(6));
    EXPECT_TRUE(client.Once(server_->port()).reused);
    ASSERT_TRUE(kept.Write(PostReview(ReviewBody({{"model", "m"}}, "young"))));
    EXPECT_EQ(kept.ReadResponses(1).find("Connection: close"), std::string::npos);
    clock.Advance(std::chrono::seconds(6));  // 12 s after the full handshake, 6 s after the last resumption
    const Resumption old = client.Once(server_->port());
    EXPECT_TRUE(old.served);
    EXPECT_FALSE(old.reused) << "a chain of resumptions outlived the session's max age";
    EXPECT_TRUE(client.Once(server_->port()).reused) << "the new full handshake starts a new chain";
    ASSERT_TRUE(kept.Write(PostReview(ReviewBody({{"model", "m"}}, "old"))));
    const std::string answer = kept.ReadResponses(1);
    EXPECT_NE(answer.find("\"uid\":\"old\""), std::string::npos) << answer;
    EXPECT_NE(answer.find("Connection: close\r\n"), std::string::npos) << "an expired session's connection goes on";
    server_->Stop();
    server_.reset();
  }
}

// Removing a CA from --client-ca must end what it allowed: reloading the
// file flushed neither the sessions nor the tickets, so a client of the
// removed CA went on resuming (issue 41). Now a session of older client CAs
// does not resume (the full handshake verifies the certificate again), and
// idle connections it verified are closed when the CAs change.
TEST_F(ServerTest, NewClientCasEndTheSessionsAndConnectionsTheOldOnesVerified) {
  MakeCerts("--reuse-ca --client apiserver");
  test::TempDir other;
  ASSERT_EQ(
      test::Run(std::string("bash ") + MS_SOURCE_DIR + "/certs-scripts/gen-certs.sh --out " + other.path()).exit_code,
      0);
  const std::string old_ca = process::ReadFile(dir_.File("ca.crt")), new_ca = process::ReadFile(other.File("ca.crt"));
  const std::string client_ca = dir_.File("client-ca.crt");
  for (const int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    SCOPED_TRACE(version == TLS1_2_VERSION ? "TLS 1.2" : "TLS 1.3");
    test::WriteFile(client_ca, old_ca);
    ServerOptions o;
    o.tls.client_ca_file = client_ca;
    o.cert_poll_interval = std::chrono::hours(1);  // reloaded by hand
    Start(o);
    SessionClient client(version, dir_.File("ca.crt"), dir_.File("apiserver.crt"), dir_.File("apiserver.key"));
    EXPECT_FALSE(client.Once(server_->port()).reused);
    EXPECT_TRUE(client.Once(server_->port()).reused);
    // The old CA and a new one: the client's certificate is still good, but
    // its session was verified by other CAs.
    test::WriteFile(client_ca, old_ca + new_ca);
    ASSERT_TRUE(server_->certificates()->ReloadIfChanged());
    const Resumption both = client.Once(server_->port());
    EXPECT_TRUE(both.served);
    EXPECT_FALSE(both.reused) << "a session of the old client CAs resumed";
    // The new CA alone: the client's ticket no longer gets it in.
    test::WriteFile(client_ca, new_ca);
    ASSERT_TRUE(server_->certificates()->ReloadIfChanged());
    EXPECT_FALSE(client.Once(server_->port()).served) << "a client of a removed CA was served on its ticket";
    server_->Stop();
    server_.reset();
  }
  // An idle connection the old CA verified is closed as soon as the reload
  // loop installs the new one.
  test::WriteFile(client_ca, old_ca);
  ServerOptions o;
  o.tls.client_ca_file = client_ca;
  o.cert_poll_interval = std::chrono::milliseconds(50);
  Start(o);
  RawTls idle(server_->port());
  ASSERT_TRUE(idle.UseCertificate(dir_.File("apiserver.crt"), dir_.File("apiserver.key")));
  ASSERT_TRUE(idle.Handshake());
  ASSERT_TRUE(idle.Write(PostReview(ReviewBody({{"model", "m"}}, "before"))));
  ASSERT_NE(idle.ReadResponses(1).find("\"uid\":\"before\""), std::string::npos);
  test::WriteFile(client_ca, new_ca);
  EXPECT_TRUE(idle.ReadsCloseNotify()) << "the connection of a removed CA stayed open";
}

// The client CA file is reloaded like the serving pair: after it changes, a
// client of the new CA is accepted and one of the old CA is refused.
TEST_F(ServerTest, ClientCaFileIsReloadedWhenItChanges) {
  MakeCerts("--reuse-ca --client apiserver");
  test::TempDir other;
  ASSERT_EQ(test::Run(std::string("bash ") + MS_SOURCE_DIR + "/certs-scripts/gen-certs.sh --out " + other.path() +
                      " --client next")
                .exit_code,
            0);
  const std::string client_ca = dir_.File("client-ca.crt");
  test::WriteFile(client_ca, process::ReadFile(dir_.File("ca.crt")));
  ServerOptions o;
  o.tls.client_ca_file = client_ca;
  o.cert_poll_interval = std::chrono::hours(1);  // reloaded by hand below
  Start(o);
  ClientOptions old_client = Trusting(), next_client = Trusting();
  old_client.cert = dir_.File("apiserver.crt");
  old_client.key = dir_.File("apiserver.key");
  next_client.cert = other.File("next.crt");
  next_client.key = other.File("next.key");
  EXPECT_EQ(Request(Url("/validate"), ReviewBody({{"model", "m"}}), old_client).code, CURLE_OK);
  EXPECT_NE(Request(Url("/validate"), ReviewBody({{"model", "m"}}), next_client).code, CURLE_OK);

  const uint64_t generation = server_->certificates()->generation();
  test::WriteFile(client_ca, "not a certificate");
  EXPECT_FALSE(server_->certificates()->ReloadIfChanged()) << "a CA file without a certificate was installed";
  EXPECT_EQ(Request(Url("/validate"), ReviewBody({{"model", "m"}}), old_client).code, CURLE_OK);

  test::WriteFile(client_ca, process::ReadFile(other.File("ca.crt")));
  EXPECT_TRUE(server_->certificates()->ReloadIfChanged());
  EXPECT_GT(server_->certificates()->generation(), generation);
  auto next = Request(Url("/validate"), ReviewBody({{"model", "m"}}), next_client);
  EXPECT_EQ(next.code, CURLE_OK) << next.error;
  EXPECT_EQ(next.status, 200);
  EXPECT_NE(Request(Url("/validate"), ReviewBody({{"model", "m"}}), old_client).code, CURLE_OK);
}

TEST_F(ServerTest, StartFailsClearlyOnBadCertificates) {
  test::WriteFile(dir_.File("tls.key"), "garbage");
  ServerOptions o;
  o.http.host = "127.0.0.1";
  o.http.port = 0;
  o.cert_file = dir_.File("tls.crt");
  o.key_file = dir_.File("tls.key");
  Server s(o, {&validating_, &mutating_}, metrics_, logger_);
  std::string error;
  EXPECT_FALSE(s.Start(&error));
  EXPECT_NE(error.find("no PEM private key found"), std::string::npos) << error;
}

// Rotation under load: client threads keep sending (new connections, so
// every request performs a handshake) while the certificate is replaced
// several times; no request may fail, and the new certificate is served.
TEST_F(ServerTest, CertificateRotationUnderLoadFailsNoRequest) {
  Start();
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable answered;  // notified with every answer
  int ok = 0, failed = 0;            // under mu
  std::string first_failure;
  std::vector<std::thread> clients;
  for (int t = 0; t < 3; ++t) {
    clients.emplace_back([&, t] {
      int i = 0;
      while (!stop) {
        CurlHandle h;  // a fresh connection and handshake per request
        // Appended (see KeepAliveServesManyRequestsOnOneConnection: GCC 12's
        // false -Wrestrict on operator+(const char*, string&&) at -O3).
        const std::string uid = std::string("r").append(std::to_string(t)).append("-").append(std::to_string(i));
        auto r = Request(h.h, Url(i % 2 ? "/mutate" : "/validate"), ReviewBody({{"model", "m"}}, uid), Trusting());
        ++i;
        std::lock_guard<std::mutex> g(mu);
        if (r.code == CURLE_OK && r.status == 200) {
          ++ok;
        } else if (failed++ == 0) {
          first_failure = r.error + " status " + std::to_string(r.status);
        }
        answered.notify_all();
      }
    });
  }
  const uint64_t gen0 = server_->certificates()->generation();
  // Until 5 more requests are answered (or one fails).
  auto five_more = [&] {
    std::unique_lock<std::mutex> lock(mu);
    const int served = ok;
    return answered.wait_for(lock, std::chrono::seconds(20), [&] { return ok >= served + 5 || failed > 0; });
  };
  // Each certificate serves some requests, then the next one is written and
  // installed (by hand here, as the reload loop would at its next look)
  // while the clients go on.
  for (int rotation = 0; rotation < 4; ++rotation) {
    EXPECT_TRUE(five_more());
    const uint64_t gen = server_->certificates()->generation();
    MakeCerts("--reuse-ca --dns rotation-" + std::to_string(rotation) + ".example");
    server_->certificates()->ReloadIfChanged();  // or the reload loop did just now
    EXPECT_GT(server_->certificates()->generation(), gen) << "rotation " << rotation;
  }
  EXPECT_TRUE(five_more());
  stop = true;
  for (auto& c : clients) c.join();
  EXPECT_EQ(failed, 0) << first_failure;
  EXPECT_GT(ok, 20);
  EXPECT_GE(server_->certificates()->generation(), gen0 + 4);

  // The certificate now served is the last one written.
  auto res = test::Run("echo | openssl s_client -connect 127.0.0.1:" + std::to_string(server_->port()) + " -CAfile " +
                       dir_.File("ca.crt") + " 2>/dev/null | openssl x509 -noout -ext subjectAltName");
  EXPECT_NE(res.output.find("rotation-3.example"), std::string::npos) << res.output;
}

TEST_F(ServerTest, HalfWrittenRotationKeepsTheOldCertificate) {
  Start();
  const uint64_t gen0 = server_->certificates()->generation();
  // A new certificate with the old key: a mismatched pair.
  test::TempDir other;
  ASSERT_EQ(test::Run(std::string("bash ") + MS_SOURCE_DIR + "/certs-scripts/gen-certs.sh --out " + other.path() +
                      " --ip 127.0.0.1")
                .exit_code,
            0);
  test::WriteFile(dir_.File("tls.crt"), process::ReadFile(other.File("tls.crt")));
  EXPECT_FALSE(server_->certificates()->ReloadIfChanged());
  EXPECT_EQ(server_->certificates()->generation(), gen0);
  ExpectServing();
}

TEST_F(ServerTest, ExpiredCertificateIsServedButRefusedByVerifyingClients) {
  // Signed by the test CA, valid for one day in 2020 (openssl ca sets the
  // dates; openssl x509 can only count days from now).
  auto res = test::Run(
      "cd " + dir_.path() +
      " && openssl req -new -key tls.key -subj /CN=expired -out e.csr 2>&1"
      " && mkdir -p expired && : > expired/index.txt && echo 01 > expired/serial"
      " && printf '[ca]\\ndefault_ca=d\\n[d]\\ndatabase=expired/index.txt\\nserial=expired/serial\\n"
      "new_certs_dir=expired\\ndefault_md=sha256\\npolicy=p\\nx509_extensions=ext\\n[p]\\ncommonName=supplied\\n"
      "[ext]\\nsubjectAltName=IP:127.0.0.1\\n' > expired.cnf"
      " && openssl ca -batch -config expired.cnf -cert ca.crt -keyfile ca.key -in e.csr -out tls.crt -notext"
      " -startdate 20200101000000Z -enddate 20200102000000Z 2>&1");
  ASSERT_EQ(res.exit_code, 0) << res.output;
  ASSERT_NE(test::Run("openssl x509 -checkend 0 -noout -in " + dir_.File("tls.crt")).exit_code, 0) << "not expired";
  Start();
  auto r = Request(Url("/validate"), ReviewBody({{"model", "m"}}), Trusting());
  EXPECT_EQ(r.code, CURLE_PEER_FAILED_VERIFICATION) << r.error;
  EXPECT_NE(r.error.find("expired"), std::string::npos) << r.error;
}

}  // namespace
}  // namespace ms::webhook
