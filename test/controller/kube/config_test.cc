#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

#include "controller/kube/config.h"
#include "controller/kube/token_source.h"
#include "test/support/fake_clock.h"

namespace ms::kube {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "kube_config_test.XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string Write(const std::string& rel, const std::string& content) const {
    fs::path p = path_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }

 private:
  fs::path path_;
};

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// "-----BEGIN CERTIFICATE-----\nCA\n" base64 of a short fake PEM text.
const std::string kCaPem = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
const std::string kCaB64 = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K";
const std::string kCertB64 = "Q0VSVA==";  // CERT
const std::string kKeyB64 = "S0VZ";       // KEY

std::string RunThrowMessage(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "<no exception>";
}

TEST(KubeConfig, KubeconfigWithDataFieldsAndCurrentContext) {
  TempDir dir;
  const std::string path = dir.Write("config", R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: prod-cluster
  cluster:
    server: https://prod.example:6443
- name: dev-cluster
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority-data: )" + kCaB64 + R"(
contexts:
- name: prod
  context: {cluster: prod-cluster, user: prod-user}
- name: dev
  context:
    cluster: dev-cluster
    user: dev-user
    namespace: team
users:
- name: prod-user
  user: {token: prod-token}
- name: dev-user
  user:
    client-certificate-data: )" + kCertB64 + R"(
    client-key-data: )" + kKeyB64 + R"(
)");
  RestConfig cfg = LoadKubeconfig(path);
  EXPECT_EQ(cfg.server, "https://127.0.0.1:6443");
  EXPECT_EQ(cfg.ca_pem, kCaPem);
  EXPECT_EQ(cfg.client_cert_pem, "CERT");
  EXPECT_EQ(cfg.client_key_pem, "KEY");
  EXPECT_EQ(cfg.bearer_token, "");
  EXPECT_FALSE(cfg.insecure_skip_tls_verify);
  EXPECT_EQ(cfg.qps, 20);
  EXPECT_EQ(cfg.burst, 30);

  RestConfig prod = LoadKubeconfig(path, "prod");
  EXPECT_EQ(prod.server, "https://prod.example:6443");
  EXPECT_EQ(prod.bearer_token, "prod-token");
  EXPECT_TRUE(prod.ca_pem.empty());
  EXPECT_TRUE(prod.client_cert_pem.empty());
}

TEST(KubeConfig, KubeconfigFileFormsAreRelativeToItsDirectory) {
  TempDir dir;
  dir.Write("kube/pki/ca.crt", kCaPem);
  dir.Write("kube/pki/admin.crt", "CERTFILE");
  const std::string key = dir.Write("abs/admin.key", "KEYFILE");
  dir.Write("kube/token.txt", "  file-token\n");
  const std::string path = dir.Write("kube/config", R"(current-context: c
clusters:
- name: k
  cluster:
    server: https://10.0.0.1
    certificate-authority: pki/ca.crt
    insecure-skip-tls-verify: true
contexts:
- name: c
  context: {cluster: k, user: u}
users:
- name: u
  user:
    client-certificate: pki/admin.crt
    client-key: )" + key + R"(
    tokenFile: token.txt
)");
  RestConfig cfg = LoadKubeconfig(path);
  EXPECT_EQ(cfg.server, "https://10.0.0.1");
  EXPECT_EQ(cfg.ca_pem, kCaPem);
  EXPECT_TRUE(cfg.insecure_skip_tls_verify);
  EXPECT_EQ(cfg.client_cert_pem, "CERTFILE");
  EXPECT_EQ(cfg.client_key_pem, "KEYFILE");
  EXPECT_EQ(cfg.bearer_token, "file-token");
  EXPECT_EQ(cfg.token_file, (dir.path() / "kube/token.txt").string());
}

TEST(KubeConfig, MissingCurrentContextIsAClearError) {
  TempDir dir;
  const std::string path = dir.Write("config", R"(clusters:
- name: k
  cluster: {server: https://a}
contexts:
- name: c
  context: {cluster: k}
)");
  std::string msg = RunThrowMessage([&] { LoadKubeconfig(path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("current-context"), std::string::npos) << msg;
  // An explicit context still works, and a user is optional.
  EXPECT_EQ(LoadKubeconfig(path, "c").server, "https://a");
}

TEST(KubeConfig, ErrorsNameWhatIsMissing) {
  TempDir dir;
  const std::string path = dir.Write("config", R"(current-context: gone
clusters:
- name: k
  cluster: {certificate-authority: nope.crt}
- name: s
  cluster: {server: https://s, certificate-authority: nope.crt}
- name: b
  cluster: {server: https://b, certificate-authority-data: "!!notbase64"}
- name: ok
  cluster: {server: https://ok}
contexts:
- name: noserver
  context: {cluster: k}
- name: nocluster
  context: {cluster: missing}
- name: badca
  context: {cluster: s}
- name: badb64
  context: {cluster: b}
- name: nouser
  context: {cluster: ok, user: ghost}
- name: exec
  context: {cluster: ok, user: execuser}
users:
- name: execuser
  user: {exec: {command: aws}}
)");
  EXPECT_NE(RunThrowMessage([&] { LoadKubeconfig(path); }).find("context \"gone\" not found"), std::string::npos);
  EXPECT_NE(RunThrowMessage([&] { LoadKubeconfig(path, "noserver"); }).find("has no server"), std::string::npos);
  EXPECT_NE(RunThrowMessage([&] { LoadKubeconfig(path, "nocluster"); }).find("cluster \"missing\""), std::string::npos);
  std::string badca = RunThrowMessage([&] { LoadKubeconfig(path, "badca"); });
  EXPECT_NE(badca.find("nope.crt"), std::string::npos) << badca;
  EXPECT_NE(badca.find("certificate-authority"), std::string::npos) << badca;
  EXPECT_NE(RunThrowMessage([&] { LoadKubeconfig(path, "badb64"); }).find("not valid base64"), std::string::npos);
  EXPECT_NE(RunThrowMessage([&] { LoadKubeconfig(path, "nouser"); }).find("user \"ghost\""), std::string::npos);
  EXPECT_NE(RunThrowMessage([&] { LoadKubeconfig(path, "exec"); }).find("not supported"), std::string::npos);
  EXPECT_NE(RunThrowMessage([&] { LoadKubeconfig((dir.path() / "absent").string()); }).find("cannot open"),
            std::string::npos);
  const std::string bad_yaml = dir.Write("bad", "clusters: [\n");
  EXPECT_NE(RunThrowMessage([&] { LoadKubeconfig(bad_yaml); }).find("invalid YAML"), std::string::npos);
}

TEST(KubeConfig, InClusterConfig) {
  TempDir dir;
  dir.Write("sa/token", "sa-token-1\n");
  dir.Write("sa/ca.crt", kCaPem);
  const std::string sa = (dir.path() / "sa").string();
  auto env = Env({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}});
  ASSERT_TRUE(InCluster(env));
  RestConfig cfg = LoadInClusterConfig(env, sa);
  EXPECT_EQ(cfg.server, "https://10.96.0.1:443");
  EXPECT_EQ(cfg.bearer_token, "sa-token-1");
  EXPECT_EQ(cfg.token_file, sa + "/token");
  EXPECT_EQ(cfg.ca_pem, kCaPem);

  auto env6 = Env({{"KUBERNETES_SERVICE_HOST", "fd00::1"}, {"KUBERNETES_SERVICE_PORT", "6443"}});
  EXPECT_EQ(LoadInClusterConfig(env6, sa).server, "https://[fd00::1]:6443");

  EXPECT_FALSE(InCluster(Env({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}})));
  std::string msg = RunThrowMessage([&] { LoadInClusterConfig(Env({}), sa); });
  EXPECT_NE(msg.find("KUBERNETES_SERVICE_HOST"), std::string::npos);
  std::string nofile = RunThrowMessage([&] { LoadInClusterConfig(env, (dir.path() / "none").string()); });
  EXPECT_NE(nofile.find("token"), std::string::npos) << nofile;
}

TEST(KubeConfig, ResolveOrder) {
  TempDir dir;
  dir.Write("sa/token", "t");
  dir.Write("sa/ca.crt", kCaPem);
  const std::string sa = (dir.path() / "sa").string();
  auto kc = [&](const std::string& name, const std::string& server) {
    return dir.Write(name, "current-context: c\nclusters:\n- name: k\n  cluster: {server: " + server +
                               "}\ncontexts:\n- name: c\n  context: {cluster: k}\n");
  };
  const std::string flag = kc("flag.yaml", "https://flag");
  const std::string envkc = kc("env.yaml", "https://env");
  kc("home/.kube/config", "https://home");
  const std::string home = (dir.path() / "home").string();
  std::map<std::string, std::string> vars{{"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
                                          {"KUBERNETES_SERVICE_PORT", "443"},
                                          {"KUBECONFIG", envkc + ":/nonexistent/other"},
                                          {"HOME", home}};
  EXPECT_EQ(ResolveConfig(flag, Env(vars), sa).server, "https://flag");
  EXPECT_EQ(ResolveConfig("", Env(vars), sa).server, "https://10.0.0.1:443");
  vars.erase("KUBERNETES_SERVICE_HOST");
  EXPECT_EQ(ResolveConfig("", Env(vars), sa).server, "https://env");
  vars.erase("KUBECONFIG");
  EXPECT_EQ(ResolveConfig("", Env(vars), sa).server, "https://home");
  vars["HOME"] = (dir.path() / "nohome").string();
  std::string msg = RunThrowMessage([&] { ResolveConfig("", Env(vars), sa); });
  EXPECT_NE(msg.find("nohome/.kube/config"), std::string::npos) << msg;
}

TEST(KubeTokenSource, RereadsRotatedTokenAtMostOncePerPeriod) {
  TempDir dir;
  const std::string file = dir.Write("token", "one\n");
  FakeClock clock;
  TokenSource ts("", file, clock, std::chrono::minutes(1));
  EXPECT_EQ(ts.Token(), "one");
  dir.Write("token", "two\n");
  EXPECT_EQ(ts.Token(), "one");  // not re-read before the period
  clock.Advance(std::chrono::seconds(59));
  EXPECT_EQ(ts.Token(), "one");
  clock.Advance(std::chrono::seconds(1));
  EXPECT_EQ(ts.Token(), "two");
  // A 401 forces a re-read at once.
  dir.Write("token", "three");
  EXPECT_TRUE(ts.Refresh());
  EXPECT_EQ(ts.Token(), "three");
  EXPECT_FALSE(ts.Refresh());  // unchanged
  // A missing or empty file keeps the last good token.
  fs::remove(file);
  clock.Advance(std::chrono::minutes(2));
  EXPECT_EQ(ts.Token(), "three");
  dir.Write("token", "");
  EXPECT_FALSE(ts.Refresh());
  EXPECT_EQ(ts.Token(), "three");
}

TEST(KubeTokenSource, StaticTokenWithoutFile) {
  FakeClock clock;
  TokenSource ts("static", "", clock);
  clock.Advance(std::chrono::hours(1));
  EXPECT_EQ(ts.Token(), "static");
  EXPECT_FALSE(ts.Refresh());
  EXPECT_FALSE(ts.has_file());
}

}  // namespace
}  // namespace ms::kube
