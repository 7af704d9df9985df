#include "controller/flags.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace ms::controller {
namespace {

using std::chrono::milliseconds;

TEST(Flags, Defaults) {
  FlagsResult r = ParseFlags({});
  ASSERT_FALSE(r.error);
  const Flags& f = r.flags;
  EXPECT_FALSE(f.leader_elect);
  EXPECT_EQ(f.leader_election_id, "modelservice-controller");
  EXPECT_EQ(f.concurrency, 2);
  EXPECT_EQ(f.ns, "");
  EXPECT_EQ(f.default_image, "registry.local/model-server:latest");
  EXPECT_EQ(f.prometheus_url, "http://prometheus-operated.monitoring.svc:9090");
  EXPECT_EQ(f.prometheus_query, "sum(modelservice_queue_length{namespace=\"NS\",modelservice=\"NAME\"})");
  EXPECT_EQ(f.autoscale_interval, milliseconds(15000));
  EXPECT_EQ(f.prometheus_timeout, milliseconds(5000));
  EXPECT_EQ(f.prometheus_gpu_query, "avg by (pod) (DCGM_FI_DEV_GPU_UTIL{namespace=\"NS\",pod=~\"PODS\"})");
  EXPECT_EQ(f.scale_down_stabilization, milliseconds(300000));
  EXPECT_LE(f.kube_api_qps, 0) << "no client-side limit by default";
  EXPECT_EQ(f.kube_api_burst, 30);
  EXPECT_EQ(f.metrics_bind_address, ":8080");
  EXPECT_EQ(f.health_probe_bind_address, ":8081");
}

TEST(Flags, PrometheusTimeoutAndIntervalArePositive) {
  EXPECT_EQ(ParseFlags({"--prometheus-timeout=2s"}).flags.prometheus_timeout, milliseconds(2000));
  const FlagsResult zero = ParseFlags({"--prometheus-timeout=0s"});
  ASSERT_TRUE(zero.error);
  EXPECT_NE(zero.error->find("--prometheus-timeout must be positive"), std::string::npos) << *zero.error;
  const FlagsResult interval = ParseFlags({"--autoscale-interval=0s"});
  ASSERT_TRUE(interval.error);
  EXPECT_NE(interval.error->find("--autoscale-interval must be positive"), std::string::npos) << *interval.error;
}

TEST(Flags, EqualsAndSpaceForms) {
  FlagsResult r = ParseFlags({"--concurrency=4", "--namespace", "ml", "--leader-elect", "--autoscale-interval", "300ms",
                              "--scale-down-stabilization=5m", "-v=3", "--kube-api-qps", "50.5", "--log-format=text",
                              "--kubeconfig", "/tmp/kc", "--leader-election-namespace=ops"});
  ASSERT_FALSE(r.error) << *r.error;
  EXPECT_EQ(r.flags.concurrency, 4);
  EXPECT_EQ(r.flags.ns, "ml");
  EXPECT_TRUE(r.flags.leader_elect);
  EXPECT_EQ(r.flags.autoscale_interval, milliseconds(300));
  EXPECT_EQ(r.flags.scale_down_stabilization, milliseconds(300000));
  EXPECT_EQ(r.flags.log_level, "3");
  EXPECT_DOUBLE_EQ(r.flags.kube_api_qps, 50.5);
  EXPECT_EQ(r.flags.log_format, "text");
  EXPECT_EQ(r.flags.kubeconfig, "/tmp/kc");
  EXPECT_EQ(r.flags.leader_election_namespace, "ops");
}

// --namespace names one namespace or several (one informer per kind and
// namespace: main.cc, informer_set.h); empty: all.
TEST(Flags, NamespaceIsOneOrACommaSeparatedList) {
  EXPECT_TRUE(ParseFlags({}).flags.Namespaces().empty());
  EXPECT_EQ(ParseFlags({"--namespace=ml"}).flags.Namespaces(), std::vector<std::string>{"ml"});
  FlagsResult r = ParseFlags({"--namespace", "team-a, team-b,c1"});
  ASSERT_FALSE(r.error) << *r.error;
  EXPECT_EQ(r.flags.Namespaces(), (std::vector<std::string>{"team-a", "team-b", "c1"}));
  auto err = [](const std::string& v) { return ParseFlags({"--namespace=" + v}).error.value_or(""); };
  EXPECT_NE(err("a,,b").find("\"\" is not a namespace name"), std::string::npos) << err("a,,b");
  EXPECT_NE(err("Team").find("\"Team\" is not a namespace name"), std::string::npos) << err("Team");
  EXPECT_NE(err("a,b,a").find("\"a\" is named twice"), std::string::npos) << err("a,b,a");
  EXPECT_NE(err(std::string(64, 'a')).find("is not a namespace name"), std::string::npos);
  EXPECT_EQ(err(std::string(63, 'a')), "");
}

TEST(Flags, BoolFlagDoesNotEatNextArgument) {
  FlagsResult r = ParseFlags({"--leader-elect", "--concurrency", "3"});
  ASSERT_FALSE(r.error);
  EXPECT_TRUE(r.flags.leader_elect);
  EXPECT_EQ(r.flags.concurrency, 3);
  EXPECT_FALSE(ParseFlags({"--leader-elect=false"}).flags.leader_elect);
}

TEST(Flags, Errors) {
  auto err = [](std::vector<std::string> a) { return ParseFlags(a).error.value_or(""); };
  EXPECT_NE(err({"--nope"}).find("unknown flag: --nope"), std::string::npos);
  EXPECT_NE(err({"--concurrency"}).find("needs an argument"), std::string::npos);
  EXPECT_EQ(err({"--concurrency=zero"}), "invalid value \"zero\" for --concurrency: not an integer");
  EXPECT_EQ(err({"--concurrency=0"}), "--concurrency must be at least 1");
  EXPECT_EQ(err({"--kube-api-qps=0"}), "");  // no client-side limit
  EXPECT_EQ(err({"--kube-api-burst=0"}), "--kube-api-burst must be at least 1");
  EXPECT_EQ(err({"--autoscale-interval=15"}),
            "invalid value \"15\" for --autoscale-interval: not a duration (e.g. 300ms, 15s, 5m)");
  EXPECT_NE(err({"--log-format=xml"}).find("json or text"), std::string::npos);
  EXPECT_NE(err({"--metrics-bind-address=8080"}).find("invalid address"), std::string::npos);
  EXPECT_NE(err({"positional"}).find("unexpected argument"), std::string::npos);
  EXPECT_NE(err({"-v=loud"}).find("invalid log level"), std::string::npos);
  // Checked with the parser main() applies: a level it cannot apply is an error, not a silent "info".
  EXPECT_NE(err({"-v=1000"}).find("invalid log level"), std::string::npos);
  EXPECT_FALSE(ParseFlags({"-v=4"}).error);
}

TEST(Flags, PrometheusAuthentication) {
  const FlagsResult r = ParseFlags({"--prometheus-url=https://prom:9090", "--prometheus-bearer-token-file=/t/token",
                                    "--prometheus-ca-file=/tls/ca.crt", "--prometheus-cert-file=/tls/tls.crt",
                                    "--prometheus-key-file=/tls/tls.key", "--prometheus-header=X-Scope-OrgID=team-a",
                                    "--prometheus-header", "X-Extra=a=b c", "--prometheus-header-file=X-Key=/s/key"});
  ASSERT_FALSE(r.error) << *r.error;
  const autoscale::PrometheusAuth& a = r.flags.prometheus_auth;
  EXPECT_EQ(a.bearer_token_file, "/t/token");
  EXPECT_EQ(a.ca_file, "/tls/ca.crt");
  EXPECT_EQ(a.cert_file, "/tls/tls.crt");
  EXPECT_EQ(a.key_file, "/tls/tls.key");
  EXPECT_EQ(a.headers, (std::vector<std::string>{"X-Scope-OrgID=team-a", "X-Extra=a=b c"}));
  EXPECT_EQ(a.header_files, (std::vector<std::string>{"X-Key=/s/key"}));
  const FlagsResult basic =
      ParseFlags({"--prometheus-basic-auth-username=ops", "--prometheus-basic-auth-password-file=/s/password"});
  ASSERT_FALSE(basic.error) << *basic.error;
  EXPECT_EQ(basic.flags.prometheus_auth.basic_auth_username, "ops");
  EXPECT_TRUE(ParseFlags({}).flags.prometheus_auth.headers.empty());
}

TEST(Flags, PrometheusAuthenticationErrorsAtStartUp) {
  auto err = [](std::vector<std::string> a) { return ParseFlags(a).error.value_or(""); };
  EXPECT_EQ(err({"--prometheus-bearer-token-file=/t", "--prometheus-basic-auth-username=u",
                 "--prometheus-basic-auth-password-file=/p"}),
            "--prometheus-bearer-token-file and --prometheus-basic-auth-* are mutually exclusive: both set the "
            "Authorization header; choose one");
  EXPECT_EQ(err({"--prometheus-basic-auth-username=u"}),
            "--prometheus-basic-auth-username needs --prometheus-basic-auth-password-file");
  EXPECT_EQ(err({"--prometheus-basic-auth-password-file=/p"}),
            "--prometheus-basic-auth-password-file needs --prometheus-basic-auth-username");
  EXPECT_EQ(err({"--prometheus-cert-file=/c"}), "--prometheus-cert-file needs --prometheus-key-file");
  EXPECT_EQ(err({"--prometheus-key-file=/k"}), "--prometheus-key-file needs --prometheus-cert-file");
  EXPECT_EQ(err({"--prometheus-header=Authorization=Bearer x"}),
            "--prometheus-header: Authorization is not an extra header: --prometheus-bearer-token-file or "
            "--prometheus-basic-auth-username with --prometheus-basic-auth-password-file set it");
  EXPECT_EQ(
      err({"--prometheus-header-file=authorization=/x"}).rfind("--prometheus-header-file: Authorization is not", 0),
      0u);
  EXPECT_EQ(err({"--prometheus-header=X Org=a"}),
            "--prometheus-header: \"X Org\" is not an HTTP header name (an RFC 7230 token: letters, digits and "
            "!#$%&'*+-.^_`|~)");
  EXPECT_EQ(err({"--prometheus-header=X-Scope-OrgID"}),
            "--prometheus-header: want Name=Value (e.g. X-Scope-OrgID=tenant-a)");
  EXPECT_EQ(err({"--prometheus-header=X-Scope-OrgID=a\r\nX-Injected: 1"}),
            "--prometheus-header: X-Scope-OrgID: the value holds a line break (CR or LF)");
  EXPECT_EQ(err({"--prometheus-header=X-Scope-OrgID="}), "--prometheus-header: X-Scope-OrgID: the value is empty");
  EXPECT_EQ(err({"--prometheus-header=X-Scope-OrgID=a", "--prometheus-header-file=x-scope-orgid=/f"}),
            "--prometheus-header-file: the header x-scope-orgid is given twice (--prometheus-header and "
            "--prometheus-header-file name each header once)");
}

TEST(Flags, Help) {
  EXPECT_TRUE(ParseFlags({"--help"}).flags.help);
  EXPECT_TRUE(ParseFlags({"-h"}).flags.help);
  const std::string u = Usage("prog");
  EXPECT_NE(u.find("\n  prog [flags]\n"), std::string::npos) << u;
  // The program name is not substituted into defaults that happen to spell it.
  EXPECT_NE(u.find("(default \"modelservice-controller\")"), std::string::npos) << u;
  for (const char* f : {"--kubeconfig",
                        "--leader-elect",
                        "--leader-election-id",
                        "--leader-election-namespace",
                        "--concurrency",
                        "--namespace",
                        "--default-image",
                        "--prometheus-url",
                        "--prometheus-query",
                        "--prometheus-timeout",
                        "--prometheus-gpu-query",
                        "--autoscale-interval",
                        "--scale-down-stabilization",
                        "--kube-api-qps",
                        "--kube-api-burst",
                        "--metrics-bind-address",
                        "--health-probe-bind-address",
                        "--log-format",
                        "--log-level",
                        "--prometheus-bearer-token-file",
                        "--prometheus-basic-auth-username",
                        "--prometheus-basic-auth-password-file",
                        "--prometheus-ca-file",
                        "--prometheus-cert-file",
                        "--prometheus-key-file",
                        "--prometheus-header",
                        "--prometheus-header-file"}) {
    EXPECT_NE(u.find(f), std::string::npos) << f;
  }
}

TEST(LeaderElectionNamespace, FromFileElseDefault) {
  EXPECT_EQ(DefaultLeaderElectionNamespace("/nonexistent/namespace"), "default");
  const std::string path = ::testing::TempDir() + "/ns-file";
  std::ofstream(path) << "modelops-system\n";
  EXPECT_EQ(DefaultLeaderElectionNamespace(path), "modelops-system");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ms::controller
