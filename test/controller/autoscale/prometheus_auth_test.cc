// The rules of the Prometheus authentication settings, the start-up check of
// their files, and the credentials each request sends as the files rotate
// (in virtual time). The same over HTTP and HTTPS: prometheus_client_auth_test.cc.
#include "controller/autoscale/prometheus_auth.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "controller/autoscale/prometheus_client.h"
#include "controller/autoscale/prometheus_credentials.h"
#include "shared/text/base64.h"
#include "test/support/fake_clock.h"

namespace ms::autoscale {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "prom_auth_test.XXXXXX").string();
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  // Writes `content` to `name` (as a rotation would: a new file in its place).
  std::string Write(const std::string& name, const std::string& content) const {
    const fs::path p = path_ / name;
    const fs::path tmp = path_ / (name + ".new");
    std::ofstream(tmp, std::ios::binary) << content;
    fs::rename(tmp, p);
    return p.string();
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

TEST(PrometheusAuthRules, HeaderNamesAreTokensAndValuesOneLine) {
  HeaderSetting h;
  EXPECT_EQ(ParseHeaderSetting("prometheus-header", "X-Scope-OrgID=tenant-a|tenant-b", false, &h), "");
  EXPECT_EQ(h.name, "X-Scope-OrgID");
  EXPECT_EQ(h.value, "tenant-a|tenant-b");
  EXPECT_EQ(ParseHeaderSetting("prometheus-header", "!#$%&'*+-.^_`|~09azAZ=v\tw", false, &h), "") << "tchar, tab";
  for (const char* bad : {"=v", "X:Y=v", "X(Y)=v", "X\"=v", "Ünïcode=v", "X/Y=v", "X\tY=v"}) {
    EXPECT_THAT(ParseHeaderSetting("prometheus-header", bad, false, &h), HasSubstr("is not an HTTP header name"))
        << bad;
  }
  EXPECT_EQ(ParseHeaderSetting("prometheus-header", "X=a\nb", false, &h),
            "--prometheus-header: X: the value holds a line break (CR or LF)");
  EXPECT_EQ(ParseHeaderSetting("prometheus-header", "X=a\rb", false, &h),
            "--prometheus-header: X: the value holds a line break (CR or LF)");
  EXPECT_EQ(ParseHeaderSetting("prometheus-header", std::string("X=a\0b", 5), false, &h),
            "--prometheus-header: X: the value holds a control character");
  EXPECT_EQ(ParseHeaderSetting("prometheus-header", "X=a\x7f", false, &h),
            "--prometheus-header: X: the value holds a control character");
  EXPECT_EQ(ParseHeaderSetting("prometheus-header-file", "X=", true, &h),
            "--prometheus-header-file: X: the path is empty");
  EXPECT_EQ(ParseHeaderSetting("prometheus-header-file", "X", true, &h),
            "--prometheus-header-file: want Name=PATH (e.g. X-Scope-OrgID=/etc/prometheus/tenant)");
  EXPECT_THAT(ParseHeaderSetting("prometheus-header", "AUTHORIZATION=x", false, &h),
              HasSubstr("Authorization is not an extra header"));
}

TEST(PrometheusAuthRules, Combinations) {
  PrometheusAuth a;
  EXPECT_EQ(CheckPrometheusAuth(a), "") << "nothing: no authentication";
  a.basic_auth_username = "a:b";
  a.basic_auth_password_file = "/p";
  EXPECT_EQ(CheckPrometheusAuth(a), "--prometheus-basic-auth-username: a user name holds no ':' (RFC 7617)");
  a.basic_auth_username = "ops";
  EXPECT_EQ(CheckPrometheusAuth(a), "");
  a.bearer_token_file = "/t";
  EXPECT_THAT(CheckPrometheusAuth(a), HasSubstr("mutually exclusive"));
  a = {};
  a.headers = {"X-A=1", "X-B=2"};
  a.header_files = {"X-C=/c"};
  EXPECT_EQ(CheckPrometheusAuth(a), "");
  a.headers.push_back("x-a=3");
  EXPECT_THAT(CheckPrometheusAuth(a), HasSubstr("the header x-a is given twice"));
}

TEST(PrometheusAuthRules, FilesAreReadableAtStartUpAndErrorsShowNoContent) {
  TempDir dir;
  PrometheusAuth a;
  a.bearer_token_file = dir.File("missing");
  EXPECT_THAT(CheckPrometheusAuthFiles(a),
              HasSubstr("--prometheus-bearer-token-file: cannot read " + dir.File("missing")));
  a.bearer_token_file = dir.Write("empty", " \n");
  EXPECT_EQ(CheckPrometheusAuthFiles(a), "--prometheus-bearer-token-file: " + dir.File("empty") + " is empty");
  a.bearer_token_file = dir.Write("token", "tok-1\n");
  EXPECT_EQ(CheckPrometheusAuthFiles(a), "");
  a.cert_file = dir.File("no-cert");
  a.key_file = dir.File("no-key");
  EXPECT_THAT(CheckPrometheusAuthFiles(a), HasSubstr("--prometheus-cert-file: cannot read"));
  a = {};
  a.header_files = {"X-Key=" + dir.Write("two-lines", "secret-one\nsecret-two\n")};
  const std::string err = CheckPrometheusAuthFiles(a);
  EXPECT_EQ(err, "--prometheus-header-file: X-Key: in " + dir.File("two-lines") +
                     ", the value holds a line break (CR or LF)");
  EXPECT_THAT(err, Not(HasSubstr("secret")));
}

TEST(PrometheusAuthRules, RedactAndUrlPassword) {
  EXPECT_EQ(Redact("HTTP 401: bad token tok-1 (tok-1)", {"tok-1", ""}), "HTTP 401: bad token [redacted] ([redacted])");
  EXPECT_EQ(UrlPassword("https://ops:pa:ss@prom:9090/x"), "pa:ss");
  EXPECT_EQ(UrlPassword("https://ops@prom:9090/x"), "");
  EXPECT_EQ(UrlPassword("https://prom:9090/x@y"), "");
  EXPECT_EQ(UrlPassword("prom"), "");
}

TEST(PrometheusCredentials, HeadersInOrderAuthorizationFirst) {
  TempDir dir;
  FakeClock clock;
  PrometheusAuth a;
  a.basic_auth_username = "ops";
  a.basic_auth_password_file = dir.Write("password", "pw-1\n");
  a.headers = {"X-Scope-OrgID=team-a"};
  a.header_files = {"X-Key=" + dir.Write("key", "k-1")};
  PrometheusCredentials creds(a, clock);
  const RequestCredentials r = creds.Current();
  EXPECT_EQ(r.error, "");
  EXPECT_THAT(r.header_lines, ElementsAre("Authorization: Basic " + text::Base64Encode("ops:pw-1"),
                                          "X-Scope-OrgID: team-a", "X-Key: k-1"));
  EXPECT_THAT(r.secrets, ElementsAre("pw-1", text::Base64Encode("ops:pw-1"), "k-1"));
  EXPECT_TRUE(creds.has_files());
  PrometheusCredentials none({}, clock);
  EXPECT_TRUE(none.Current().header_lines.empty());
  EXPECT_FALSE(none.has_files());
}

// client-go's cached file token source: read again once the minute is up,
// or at once after a 401 (Refresh); a failed or empty read keeps the value.
TEST(PrometheusCredentials, FilesAreReadAgainAfterAMinuteOrOnRefresh) {
  TempDir dir;
  FakeClock clock;
  PrometheusAuth a;
  a.bearer_token_file = dir.Write("token", "tok-1");
  PrometheusCredentials creds(a, clock);
  EXPECT_EQ(creds.Current().header_lines.at(0), "Authorization: Bearer tok-1");
  dir.Write("token", "tok-2\n");
  clock.Advance(59s);
  EXPECT_EQ(creds.Current().header_lines.at(0), "Authorization: Bearer tok-1") << "within the minute";
  clock.Advance(1s);
  EXPECT_EQ(creds.Current().header_lines.at(0), "Authorization: Bearer tok-2");
  dir.Write("token", "tok-3");
  EXPECT_TRUE(creds.Refresh());
  EXPECT_EQ(creds.Current().header_lines.at(0), "Authorization: Bearer tok-3");
  EXPECT_FALSE(creds.Refresh()) << "unchanged";
  dir.Write("token", "");
  clock.Advance(1min);
  EXPECT_EQ(creds.Current().header_lines.at(0), "Authorization: Bearer tok-3") << "an empty file keeps the token";
  std::filesystem::remove(dir.File("token"));
  clock.Advance(1min);
  EXPECT_EQ(creds.Current().header_lines.at(0), "Authorization: Bearer tok-3") << "so does a missing one";
}

TEST(PrometheusCredentials, AHeaderFileThatTurnsBadIsNotSent) {
  TempDir dir;
  FakeClock clock;
  PrometheusAuth a;
  a.header_files = {"X-Key=" + dir.Write("key", "k-1")};
  PrometheusCredentials creds(a, clock);
  EXPECT_EQ(creds.Current().error, "");
  dir.Write("key", "k-2\nX-Injected: yes");
  clock.Advance(1min);
  const RequestCredentials r = creds.Current();
  EXPECT_EQ(r.error, "--prometheus-header-file X-Key: the value holds a line break (CR or LF)");
}

}  // namespace
}  // namespace ms::autoscale
