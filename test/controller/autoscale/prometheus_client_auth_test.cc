// PrometheusClient's authentication at the HTTP boundary, against local
// servers on 127.0.0.1: the exact headers it sends, a rotated token picked up,
// basic auth, a client certificate presented (and required, and rotated),
// and no secret in the text of a failed query.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "controller/autoscale/prometheus_client.h"
#include "controller/kube/curl_handles.h"
#include "shared/text/base64.h"
#include "test/support/fake_clock.h"
#include "test/support/http_test_server.h"

namespace ms::autoscale {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

const kube::curl::GlobalInit kCurl;

const char* kAnswer = R"({"status":"success","data":{"resultType":"scalar","result":[1700000000,"7"]}})";

// A temporary folder; Write replaces a file as a rotation does (a new file
// renamed into place).
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "prom_client_auth_test.XXXXXX").string();
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string Write(const std::string& name, const std::string& content) const {
    std::ofstream(path_ / (name + ".new"), std::ios::binary) << content;
    fs::rename(path_ / (name + ".new"), path_ / name);
    return File(name);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// What the server saw of each request, and what it lets through: the
// Authorization header it accepts (empty: any) and whether it echoes the
// request's headers in its 401 page (as some proxies do).
class Recorder {
 public:
  void Handle(const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> g(mu_);
    requests_.push_back(req.headers);
    std::string peer;
    if (req.ssl != nullptr) {
      if (X509* cert = SSL_get1_peer_certificate(req.ssl); cert != nullptr) {
        char cn[256] = {};
        X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
        peer = cn;
        X509_free(cert);
      }
    }
    peers_.push_back(peer);
    if (!accept_.empty() && req.get_header_value("Authorization") != accept_) {
      res.status = 401;
      std::string page = "Unauthorized\n";
      if (echo_)
        for (const auto& [k, v] : req.headers) page += k + ": " + v + "\n";
      res.set_header("WWW-Authenticate", "Basic");
      res.set_content(page, "text/plain");
      return;
    }
    res.set_content(kAnswer, "application/json");
  }
  void Accept(std::string authorization, bool echo = false) {
    std::lock_guard<std::mutex> g(mu_);
    accept_ = std::move(authorization);
    echo_ = echo;
  }
  std::vector<httplib::Headers> requests() {
    std::lock_guard<std::mutex> g(mu_);
    return requests_;
  }
  std::vector<std::string> peers() {
    std::lock_guard<std::mutex> g(mu_);
    return peers_;
  }

 private:
  std::mutex mu_;
  std::vector<httplib::Headers> requests_;
  std::vector<std::string> peers_;  // the client certificate's CN, or ""
  std::string accept_;
  bool echo_ = false;
};

PrometheusClientOptions Options(PrometheusAuth auth) {
  PrometheusClientOptions o;
  o.timeout = 2s;
  o.connect_timeout = 2s;
  o.no_proxy = "*";
  o.auth = std::move(auth);
  return o;
}

// A plain HTTP Prometheus that records what it is sent.
class PlainServer {
 public:
  PlainServer() {
    http.server.Get("/api/v1/query", [this](const httplib::Request& q, httplib::Response& r) { rec.Handle(q, r); });
    http.Start();
  }
  ~PlainServer() { http.Stop(); }
  std::string url() const { return http.url(); }
  Recorder rec;
  test::HttpTestServer http;
};

std::multimap<std::string, std::string> Sent(const httplib::Headers& h) {
  std::multimap<std::string, std::string> out;
  for (const auto& [k, v] : h)
    if (k != "REMOTE_ADDR" && k != "REMOTE_PORT" && k != "LOCAL_ADDR" && k != "LOCAL_PORT") out.emplace(k, v);
  return out;
}

TEST(PrometheusClientAuth, ExactHeadersSent) {
  TempDir dir;
  FakeClock clock;
  PlainServer prom;
  PrometheusAuth a;
  a.bearer_token_file = dir.Write("token", "tok-1\n");
  a.headers = {"X-Scope-OrgID=team-a|team-b"};
  a.header_files = {"X-Api-Key=" + dir.Write("key", "k-1")};
  PrometheusClient client(prom.url(), Options(a), clock);
  ASSERT_TRUE(client.Query("up").ok);
  const std::multimap<std::string, std::string> want = {
      {"Accept", "application/json"},     {"Authorization", "Bearer tok-1"},
      {"Host", prom.url().substr(7)},     {"User-Agent", "modelservice-controller"},
      {"X-Scope-OrgID", "team-a|team-b"}, {"X-Api-Key", "k-1"}};
  std::multimap<std::string, std::string> sent = Sent(prom.rec.requests().at(0));
  sent.erase("Accept-Encoding");  // libcurl's list, whatever it was built with
  EXPECT_EQ(sent, want);

  PrometheusClient anonymous(prom.url(), Options({}), clock);
  ASSERT_TRUE(anonymous.Query("up").ok);
  EXPECT_EQ(prom.rec.requests().at(1).count("Authorization"), 0u) << "no credentials: no Authorization header";
}

TEST(PrometheusClientAuth, RotatedTokenIsSentWithinTheMinuteOrAtOnceAfterA401) {
  TempDir dir;
  FakeClock clock;
  PlainServer prom;
  PrometheusAuth a;
  a.bearer_token_file = dir.Write("token", "tok-1");
  PrometheusClient client(prom.url(), Options(a), clock);
  prom.rec.Accept("Bearer tok-1");
  ASSERT_TRUE(client.Query("up").ok);
  // A rotation the server has not revoked the old token for: the new one
  // from the next read, once the minute is up.
  dir.Write("token", "tok-2");
  prom.rec.Accept("");
  ASSERT_TRUE(client.Query("up").ok);
  EXPECT_EQ(prom.rec.requests().back().find("Authorization")->second, "Bearer tok-1");
  clock.Advance(1min);
  ASSERT_TRUE(client.Query("up").ok);
  EXPECT_EQ(prom.rec.requests().back().find("Authorization")->second, "Bearer tok-2");
  // The old token revoked at once: its 401 reads the file again and the
  // query is sent again with the new token.
  dir.Write("token", "tok-3");
  prom.rec.Accept("Bearer tok-3");
  const size_t before = prom.rec.requests().size();
  const QueryResult r = client.Query("up");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(prom.rec.requests().size(), before + 2);
  // A 401 with nothing new in the files: one request, the 401 reported.
  prom.rec.Accept("Bearer tok-4");
  const QueryResult refused = client.Query("up");
  EXPECT_EQ(prom.rec.requests().size(), before + 3);
  EXPECT_FALSE(refused.ok);
  EXPECT_FALSE(refused.unreachable) << "an answer: the breaker does not count it";
  EXPECT_EQ(refused.error, "HTTP 401: Unauthorized");
}

TEST(PrometheusClientAuth, BasicAuthAndNoSecretInTheErrorOfAFailedQuery) {
  TempDir dir;
  FakeClock clock;
  PlainServer prom;
  PrometheusAuth a;
  a.basic_auth_username = "ops";
  a.basic_auth_password_file = dir.Write("password", "correct horse\n");
  a.header_files = {"X-Api-Key=" + dir.Write("key", "key-material")};
  const std::string good = "Basic " + text::Base64Encode("ops:correct horse");
  prom.rec.Accept(good);
  // The URL's own userinfo too (libcurl would send it if no header did).
  const std::string url = "http://viewer:url-secret@" + prom.url().substr(7);
  PrometheusClient client(url, Options(a), clock);
  const QueryResult ok = client.Query("up");
  ASSERT_TRUE(ok.ok) << ok.error;
  EXPECT_EQ(prom.rec.requests().back().find("Authorization")->second, good);

  dir.Write("password", "battery staple");
  prom.rec.Accept("Basic " + text::Base64Encode("ops:something else"), /*echo=*/true);
  const QueryResult r = client.Query("up");
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("HTTP 401: Unauthorized "));
  EXPECT_THAT(r.error, HasSubstr("Authorization: Basic [redacted]")) << "the echoed header, without its value";
  const std::vector<std::string> secrets = {"correct horse",
                                            "battery staple",
                                            text::Base64Encode("ops:correct horse"),
                                            text::Base64Encode("ops:battery staple"),
                                            "key-material",
                                            "url-secret"};
  for (const std::string& secret : secrets) EXPECT_THAT(r.error, Not(HasSubstr(secret))) << secret;

  // A connection that fails names the URL without its password.
  PrometheusClient refused("http://viewer:url-secret@127.0.0.1:1", Options(a), clock);
  const QueryResult down = refused.Query("up");
  EXPECT_TRUE(down.unreachable);
  EXPECT_THAT(down.error, HasSubstr("GET http://viewer:[redacted]@127.0.0.1:1 failed: "));
  EXPECT_THAT(down.error, Not(HasSubstr("url-secret")));
}

TEST(PrometheusClientAuth, AHeaderFileThatTurnsBadSendsNothing) {
  TempDir dir;
  FakeClock clock;
  PlainServer prom;
  PrometheusAuth a;
  a.header_files = {"X-Api-Key=" + dir.Write("key", "k-1")};
  PrometheusClient client(prom.url(), Options(a), clock);
  ASSERT_TRUE(client.Query("up").ok);
  dir.Write("key", "k-2\r\nX-Injected: 1");
  clock.Advance(1min);
  const QueryResult r = client.Query("up");
  EXPECT_EQ(r.error, "--prometheus-header-file X-Api-Key: the value holds a line break (CR or LF)");
  EXPECT_EQ(prom.rec.requests().size(), 1u);
}

// HTTPS with a CA, a server certificate for 127.0.0.1 and two client
// certificates of that CA (made with the openssl command line), the server
// requiring and verifying one, as a Prometheus whose web configuration has
// client_auth_type: RequireAndVerifyClientCert.
class PrometheusClientTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string d = dir_.path().string();
    const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    std::string script = "cd " + d + " && printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext && openssl req -x509" +
                         key + " -keyout ca.key -out ca.crt -days 1 -subj /CN=test-ca && openssl req" + key +
                         " -keyout server.key -out server.csr -subj /CN=127.0.0.1 && openssl x509 -req -in server.csr"
                         " -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 1 -extfile san.ext";
    for (const char* c : {"client-1", "client-2"})
      script += std::string(" && openssl req") + key + " -keyout " + c + ".key -out " + c + ".csr -subj /CN=" + c +
                " && openssl x509 -req -in " + c + ".csr -CA ca.crt -CAkey ca.key -CAcreateserial -out " + c +
                ".crt -days 1";
    have_certs_ = std::system(("(" + script + ") >/dev/null 2>&1").c_str()) == 0;
  }

  void SetUp() override {
    if (!have_certs_) GTEST_SKIP() << "openssl command line unavailable";
    server_ = std::make_unique<httplib::SSLServer>(File("server.crt").c_str(), File("server.key").c_str(),
                                                   File("ca.crt").c_str());
    ASSERT_TRUE(server_->is_valid());
    server_->Get("/api/v1/query", [this](const httplib::Request& q, httplib::Response& r) { rec_.Handle(q, r); });
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = test::ServeInBackground(*server_);
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  static std::string File(const std::string& name) { return dir_.File(name); }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }
  // The client's certificate files, where the kubelet would mount them.
  PrometheusAuth Mounted(const std::string& client) {
    std::filesystem::copy_file(File(client + ".crt"), mounted_.File("tls.crt"),
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(File(client + ".key"), mounted_.File("tls.key"),
                               std::filesystem::copy_options::overwrite_existing);
    PrometheusAuth a;
    a.ca_file = File("ca.crt");
    a.cert_file = mounted_.File("tls.crt");
    a.key_file = mounted_.File("tls.key");
    return a;
  }

  static inline TempDir dir_;
  static inline bool have_certs_ = false;
  TempDir mounted_;
  FakeClock clock_;
  Recorder rec_;
  std::unique_ptr<httplib::SSLServer> server_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(PrometheusClientTlsTest, ClientCertificatePresentedAndRotatedByTheNextQuery) {
  PrometheusClient client(url(), Options(Mounted("client-1")), clock_);
  QueryResult r = client.Query("up");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_DOUBLE_EQ(r.value, 7);
  Mounted("client-2");  // the Secret's new pair: no clock advance, no restart
  r = client.Query("up");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(rec_.peers(), (std::vector<std::string>{"client-1", "client-2"}));
}

TEST_F(PrometheusClientTlsTest, WithoutACertificateOrTheCaTheConnectionFails) {
  PrometheusAuth no_cert = Mounted("client-1");
  no_cert.cert_file.clear();
  no_cert.key_file.clear();
  PrometheusClient client(url(), Options(no_cert), clock_);
  const QueryResult r = client.Query("up");
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.unreachable);
  EXPECT_THAT(r.error, HasSubstr("GET " + url() + " failed: "));

  PrometheusAuth no_ca = Mounted("client-1");
  no_ca.ca_file.clear();
  PrometheusClient unverified(url(), Options(no_ca), clock_);
  const QueryResult u = unverified.Query("up");
  EXPECT_FALSE(u.ok);
  EXPECT_THAT(u.error, HasSubstr("certificate"));
  EXPECT_TRUE(rec_.requests().empty()) << "no request got through";
}

}  // namespace
}  // namespace ms::autoscale
