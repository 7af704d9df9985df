#include "shared/api/k8s_names.h"

#include <gtest/gtest.h>

namespace ms::api {
namespace {

std::string Join(const Problems& p) {
  std::string out;
  for (const auto& m : p) out += (out.empty() ? "" : " | ") + m;
  return out;
}

// The messages are k8s.io/apimachinery/pkg/util/validation's (v0.34.4), word for word.
const std::string kNameRegex =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
    "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const std::string kSubdomain =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

TEST(K8sNamesTest, QualifiedName) {
  for (const char* ok : {"pool", "a", "node.kubernetes.io/instance-type", "nvidia.com/gpu", "A_b.C-9", "x/y"})
    EXPECT_EQ(Join(QualifiedNameProblems(ok)), "") << ok;
  EXPECT_EQ(Join(QualifiedNameProblems("bad key")), "name part " + kNameRegex);
  EXPECT_EQ(Join(QualifiedNameProblems("-a")), "name part " + kNameRegex);
  EXPECT_EQ(Join(QualifiedNameProblems("")), "name part must be non-empty | name part " + kNameRegex);
  EXPECT_EQ(Join(QualifiedNameProblems("/a")), "prefix part must be non-empty");
  EXPECT_EQ(Join(QualifiedNameProblems("Example.com/a")), "prefix part " + kSubdomain);
  EXPECT_EQ(Join(QualifiedNameProblems("a/")), "name part must be non-empty | name part " + kNameRegex);
  EXPECT_EQ(Join(QualifiedNameProblems(std::string(64, 'a'))), "name part must be no more than 63 characters");
  EXPECT_EQ(
      Join(QualifiedNameProblems("a/b/c")),
      "a qualified name " + kNameRegex + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
}

TEST(K8sNamesTest, LabelValue) {
  for (const char* ok : {"", "a100", "A-b_c.d", "1"}) EXPECT_EQ(Join(LabelValueProblems(ok)), "") << ok;
  const std::string regex =
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
      "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation "
      "is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
  EXPECT_EQ(Join(LabelValueProblems("a b")), regex);
  EXPECT_EQ(Join(LabelValueProblems("a-")), regex);
  EXPECT_EQ(Join(LabelValueProblems(std::string(64, 'a'))), "must be no more than 63 characters");
  EXPECT_EQ(Join(LabelValueProblems(std::string(64, '-'))), "must be no more than 63 characters | " + regex);
}

TEST(K8sNamesTest, Dns1123Subdomain) {
  for (const char* ok : {"regcred", "a.b-c", "0", "model-server.v1"})
    EXPECT_EQ(Join(Dns1123SubdomainProblems(ok)), "") << ok;
  for (const char* bad : {"", "Regcred", "a..b", "a.", "-a", "a_b", "a b"})
    EXPECT_EQ(Join(Dns1123SubdomainProblems(bad)), kSubdomain) << bad;
  EXPECT_EQ(Join(Dns1123SubdomainProblems(std::string(254, 'a'))), "must be no more than 253 characters");
}

TEST(K8sNamesTest, ConfigMapKey) {
  for (const char* ok : {"token", "KEY_NAME", "a.b-c", ".dot"}) EXPECT_EQ(Join(ConfigMapKeyProblems(ok)), "") << ok;
  const std::string regex =
      "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME', "
      " or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
  EXPECT_EQ(Join(ConfigMapKeyProblems("a/b")), regex);
  EXPECT_EQ(Join(ConfigMapKeyProblems(".")), "must not be '.'");
  EXPECT_EQ(Join(ConfigMapKeyProblems("..")), "must not be '..'");
  EXPECT_EQ(Join(ConfigMapKeyProblems("..a")), "must not start with '..'");
}

TEST(K8sNamesTest, EnvVarNameIsTheRelaxedRuleOfV134) {
  // Since v1.34 (RelaxedEnvironmentVariableValidation GA) a name may start
  // with a digit and hold spaces and punctuation: only '=', controls and
  // non-ASCII are refused.
  for (const char* ok : {"HF_HOME", "1X", "my.env-name", "a b", "$weird!"})
    EXPECT_EQ(Join(EnvVarNameProblems(ok)), "") << ok;
  const std::string msg =
      "a valid environment variable name must consist only of printable ASCII characters other than '='";
  for (const char* bad : {"A=B", "tab\there", "caf\xc3\xa9", "\x7f"})
    EXPECT_EQ(Join(EnvVarNameProblems(bad)), msg) << bad;
}

}  // namespace
}  // namespace ms::api
