// The certificate flags of the controller and what they mean.
#include "controller/webhookcerts/policy.h"

#include <gtest/gtest.h>

#include "shared/flags/flags.h"

namespace ms::webhookcerts {
namespace {

using namespace std::chrono_literals;

std::string Parse(Settings& s, std::vector<std::string> args) {
  flags::FlagSet fs("test", "test");
  DefineFlags(fs, s);
  std::string err = fs.Parse(args);
  if (err.empty()) err = CheckSettings(s);
  return err;
}

TEST(CertFlags, DefaultsAreSelfModeWithTheManifestsNames) {
  Settings s;
  ASSERT_EQ(Parse(s, {}), "");
  EXPECT_EQ(s.mode, Mode::kSelf);
  EXPECT_EQ(s.secret_name, "modelservice-webhook-tls");
  EXPECT_EQ(s.service_name, "modelservice-webhook");
  EXPECT_EQ(s.validating_configuration, "modelservice-validating");
  EXPECT_EQ(s.mutating_configuration, "modelservice-mutating");
  EXPECT_EQ(s.ca_validity, std::chrono::hours(87600));
  EXPECT_EQ(s.serving_validity, std::chrono::hours(8760));
}

TEST(CertFlags, KubernetesStyleValues) {
  Settings s;
  ASSERT_EQ(Parse(s, {"--cert-mode=provided", "--cert-secret-name", "tls", "--cert-secret-namespace=ops",
                      "--webhook-service-name=wh", "--validating-webhook-configuration=v",
                      "--mutating-webhook-configuration=", "--ca-cert-validity=6m", "--serving-cert-validity=2m"}),
            "");
  EXPECT_EQ(s.mode, Mode::kProvided);
  EXPECT_EQ(s.secret_name, "tls");
  EXPECT_EQ(s.secret_namespace, "ops");
  EXPECT_EQ(s.service_name, "wh");
  EXPECT_EQ(s.validating_configuration, "v");
  EXPECT_EQ(s.mutating_configuration, "");
  EXPECT_EQ(s.ca_validity, 6min);
  EXPECT_EQ(s.serving_validity, 2min);
  Settings cm;
  ASSERT_EQ(Parse(cm, {"--cert-mode", "cert-manager"}), "");
  EXPECT_EQ(cm.mode, Mode::kCertManager);
  EXPECT_EQ(ModeName(cm.mode), "cert-manager");
}

TEST(CertFlags, BadValuesSayWhatIsWrong) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"--cert-mode=manual"}, "--cert-mode must be one of self, cert-manager, provided (got \"manual\")"},
      {{"--webhook-service-name=Web_Hook"}, "--webhook-service-name must be a DNS label (a Service name)"},
      {{"--cert-secret-namespace=a.b"}, "--cert-secret-namespace must be a DNS label (a namespace)"},
      {{"--cert-secret-name="}, "--cert-secret-name must not be empty"},
      {{"--serving-cert-validity=30s"}, "--serving-cert-validity must be at least 1m"},
      {{"--serving-cert-validity=2h", "--ca-cert-validity=1h"},
       "--ca-cert-validity must be at least --serving-cert-validity"},
  };
  for (const auto& [args, want] : cases) {
    Settings s;
    EXPECT_EQ(Parse(s, args), want) << args[0];
  }
  // Other modes do not use those flags: nothing to check.
  Settings p;
  EXPECT_EQ(Parse(p, {"--cert-mode=provided", "--serving-cert-validity=30s"}), "");
}

TEST(CertPolicy, TheServiceNamesAndTheCommonName) {
  Settings s;
  s.secret_namespace = "modelservice-system";
  const Policy p = MakePolicy(s);
  EXPECT_EQ(p.dns_names, (std::vector<std::string>{"modelservice-webhook", "modelservice-webhook.modelservice-system",
                                                   "modelservice-webhook.modelservice-system.svc",
                                                   "modelservice-webhook.modelservice-system.svc.cluster.local"}));
  EXPECT_EQ(p.common_name, "modelservice-webhook.modelservice-system.svc");
  EXPECT_EQ(p.propagation, 5min);
}

}  // namespace
}  // namespace ms::webhookcerts
