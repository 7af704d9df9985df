// The pod fields of the spec, validated as the API server validates a pod
// template (Kubernetes v1.34 wording, on the ModelService's paths), through
// the whole of ValidateModelService: the parser, the rules and the schema.
#include <gtest/gtest.h>

#include "shared/api/pod_template.h"
#include "shared/api/validation.h"
#include "test/support/modelservice_schema.h"

namespace ms::api {
namespace {

using nlohmann::json;

ValidationOutcome With(const json& fields) { return test::ValidateSpecFields(fields); }
std::string Errors(const json& fields) { return test::SpecFieldErrors(fields); }
std::string Warnings(const json& fields) {
  std::string out;
  for (const auto& w : With(fields).warnings) out += (out.empty() ? "" : " | ") + w;
  return out;
}

const std::string kSubdomain =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const std::string kNameRegex =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const std::string kLabelValue =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

TEST(PodValidationTest, EveryFieldAtOnceIsValid) {
  const json fields = json::parse(R"({
    "resources": {"requests": {"cpu": "2", "memory": "8Gi", "ephemeral-storage": "10Gi"},
                  "limits": {"cpu": 4, "memory": "8Gi"}},
    "env": [{"name": "HF_HOME", "value": "/cache"},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token", "optional": true}}},
            {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "mode"}}}],
    "nodeSelector": {"pool": "a100", "node.kubernetes.io/instance-type": "p4d.24xlarge"},
    "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"},
                    {"operator": "Exists"},
                    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                     "tolerationSeconds": 30}],
    "args": ["--port", "8080"],
    "imagePullSecrets": [{"name": "regcred"}],
    "serviceAccountName": "model-reader",
    "priorityClassName": "model-serving.high",
    "podAnnotations": {"prometheus.io/scrape": "true", "Example.com/Mixed_Case": "ok"},
    "podLabels": {"team": "nlp"}})");
  const auto out = With(fields);
  EXPECT_EQ(JoinErrors(out.errors), "");
  EXPECT_TRUE(out.warnings.empty()) << out.warnings.front();
}

TEST(PodValidationTest, Resources) {
  EXPECT_EQ(Errors({{"resources", {{"limits", {{"nvidia.com/gpu", 1}}}}}}),
            "spec.resources.limits[nvidia.com/gpu]: Forbidden: the GPUs of each pod come from spec.gpus: set "
            "spec.gpus instead");
  EXPECT_EQ(Errors({{"resources", {{"requests", {{"hugepages-2Mi", "1Gi"}}}}}}),
            "spec.resources.requests[hugepages-2Mi]: Unsupported value: \"hugepages-2Mi\": supported values: \"cpu\", "
            "\"memory\", \"ephemeral-storage\"");
  EXPECT_EQ(Errors({{"resources", {{"requests", {{"cpu", "-1"}}}}}}),
            "spec.resources.requests[cpu]: Invalid value: \"-1\": must be greater than or equal to 0");
  // request <= limit, compared by value and shown in the canonical form, on
  // the path of the requests (as the API server reports it).
  EXPECT_EQ(Errors({{"resources", {{"requests", {{"cpu", "2000m"}}}, {"limits", {{"cpu", "1.5"}}}}}}),
            "spec.resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1500m");
  EXPECT_EQ(Errors({{"resources", {{"requests", {{"memory", "1.5Gi"}}}, {"limits", {{"memory", "1G"}}}}}}),
            "spec.resources.requests: Invalid value: \"1536Mi\": must be less than or equal to memory limit of 1G");
  EXPECT_EQ(Errors({{"resources", {{"requests", {{"cpu", "1"}}}, {"limits", {{"cpu", "1000m"}}}}}}), "");
  // Not a quantity: the schema's form, and the parser's wording.
  EXPECT_EQ(Errors({{"resources", {{"limits", {{"memory", "8 GB"}}}}}}),
            "spec.resources.limits[memory]: Invalid value: \"8 GB\": must be a quantity such as 500m, 2 or 8Gi");
  EXPECT_EQ(Warnings({{"resources", {{"requests", {{"memory", "1500m"}}}, {"limits", {{"memory", "2.5"}}}}}}),
            "spec.resources.limits[memory]: fractional byte value \"2500m\" is invalid, must be an integer | "
            "spec.resources.requests[memory]: fractional byte value \"1500m\" is invalid, must be an integer");
}

TEST(PodValidationTest, Env) {
  auto env = [](const json& e) { return Errors({{"env", json::array({e})}}); };
  EXPECT_EQ(env({{"value", "x"}}), "spec.env[0].name: Required value");
  EXPECT_EQ(env({{"name", ""}}), "spec.env[0].name: Required value");
  EXPECT_EQ(env({{"name", "A=B"}}),
            "spec.env[0].name: Invalid value: \"A=B\": a valid environment variable name must consist only of "
            "printable ASCII characters other than '='");
  EXPECT_EQ(env({{"name", "1X"}}), "");  // valid since Kubernetes v1.34
  EXPECT_EQ(env({{"name", "MODEL_NAME"}, {"value", "x"}}),
            "spec.env[0].name: Forbidden: MODEL_NAME is set by the controller from spec.model: set that field instead");
  EXPECT_EQ(env({{"name", "MODEL_VERSION"}}),
            "spec.env[0].name: Forbidden: MODEL_VERSION is set by the controller from spec.version: set that field "
            "instead");
  EXPECT_EQ(env({{"name", "T"}, {"value", "x"}, {"valueFrom", {{"secretKeyRef", {{"name", "s"}, {"key", "k"}}}}}}),
            "spec.env[0].valueFrom: Invalid value: \"\": may not be specified when `value` is not empty");
  EXPECT_EQ(env({{"name", "T"}, {"valueFrom", json::object()}}),
            "spec.env[0].valueFrom: Invalid value: \"\": must specify one of: `configMapKeyRef` or `secretKeyRef`");
  EXPECT_EQ(
      env({{"name", "T"},
           {"valueFrom",
            {{"secretKeyRef", {{"name", "s"}, {"key", "k"}}}, {"configMapKeyRef", {{"name", "c"}, {"key", "k"}}}}}}),
      "spec.env[0].valueFrom: Invalid value: \"\": may not have more than one field specified at a time");
  EXPECT_EQ(env({{"name", "T"}, {"valueFrom", {{"secretKeyRef", {{"name", "Bad_Name"}, {"key", "a/b"}}}}}}),
            "spec.env[0].valueFrom.secretKeyRef.name: Invalid value: \"Bad_Name\": " + kSubdomain +
                "; spec.env[0].valueFrom.secretKeyRef.key: Invalid value: \"a/b\": a valid config key must consist of "
                "alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex "
                "used for validation is '[-._a-zA-Z0-9]+')");
  EXPECT_EQ(env({{"name", "T"}, {"valueFrom", {{"configMapKeyRef", {{"name", "c"}, {"key", ""}}}}}}),
            "spec.env[0].valueFrom.configMapKeyRef.key: Required value");
  EXPECT_EQ(env({{"name", "T"}, {"valueFrom", {{"configMapKeyRef", {{"name", "c"}}}}}}),
            "spec.env[0].valueFrom.configMapKeyRef.key: Required value");
  EXPECT_EQ(
      Warnings(
          {{"env",
            {{{"name", "A"}, {"value", "1"}}, {{"name", "A"}, {"value", "$(A):2"}}, {{"name", "A"}, {"value", "3"}}}}}),
      "spec.env[2]: hides previous definition of \"A\", which may be dropped when using apply");
}

// Pod annotations that would undo the restricted Pod Security Standard the
// controller's pods keep are denied (issue 41, finding 5a), as the Pod
// Security admission words them: an AppArmor profile other than
// runtime/default, localhost/* or none; a seccomp profile other than
// runtime/default (docker/default) or localhost/*, for the pod or any
// container.
TEST(PodValidationTest, AnnotationsThatUndoTheRestrictedProfileAreForbidden) {
  const std::string apparmor =
      ": the pods keep the restricted Pod Security Standard, which allows only \"runtime/default\" and \"localhost/*\"";
  const std::string seccomp =
      ": the pods keep the restricted Pod Security Standard, which allows only \"runtime/default\" (or "
      "\"docker/default\") and \"localhost/*\"";
  EXPECT_EQ(Errors({{"podAnnotations", {{"container.apparmor.security.beta.kubernetes.io/model", "unconfined"}}}}),
            "spec.podAnnotations[container.apparmor.security.beta.kubernetes.io/model]: Forbidden: forbidden AppArmor "
            "profile \"unconfined\"" +
                apparmor);
  EXPECT_EQ(Errors({{"podAnnotations", {{"container.apparmor.security.beta.kubernetes.io/sidecar", "bogus"}}}}),
            "spec.podAnnotations[container.apparmor.security.beta.kubernetes.io/sidecar]: Forbidden: forbidden "
            "AppArmor profile \"bogus\"" +
                apparmor);
  EXPECT_EQ(Errors({{"podAnnotations", {{"seccomp.security.alpha.kubernetes.io/pod", "unconfined"}}}}),
            "spec.podAnnotations[seccomp.security.alpha.kubernetes.io/pod]: Forbidden: forbidden seccomp profile "
            "\"unconfined\"" +
                seccomp);
  EXPECT_EQ(Errors({{"podAnnotations", {{"container.seccomp.security.alpha.kubernetes.io/model", ""}}}}),
            "spec.podAnnotations[container.seccomp.security.alpha.kubernetes.io/model]: Forbidden: forbidden seccomp "
            "profile \"\"" +
                seccomp);
  for (const char* ok : {"runtime/default", "localhost/my-profile", ""})
    EXPECT_EQ(Errors({{"podAnnotations", {{"container.apparmor.security.beta.kubernetes.io/model", ok}}}}), "") << ok;
  for (const char* ok : {"runtime/default", "docker/default", "localhost/profiles/a.json"}) {
    EXPECT_EQ(Errors({{"podAnnotations", {{"seccomp.security.alpha.kubernetes.io/pod", ok}}}}), "") << ok;
    EXPECT_EQ(Errors({{"podAnnotations", {{"container.seccomp.security.alpha.kubernetes.io/model", ok}}}}), "") << ok;
  }
  // Other annotations of those domains are not profiles.
  EXPECT_EQ(Errors({{"podAnnotations", {{"seccomp.security.alpha.kubernetes.io/other", "unconfined"}}}}), "");
}

TEST(PodValidationTest, NodeSelectorLabelsAndAnnotations) {
  EXPECT_EQ(Errors({{"nodeSelector", {{"bad key", "a100"}}}}),
            "spec.nodeSelector: Invalid value: \"bad key\": " + kNameRegex);
  EXPECT_EQ(Errors({{"nodeSelector", {{"pool", "a 100"}}}}),
            "spec.nodeSelector: Invalid value: \"a 100\": " + kLabelValue);
  EXPECT_EQ(Errors({{"podLabels", {{"team", std::string(64, 'x')}}}}),
            "spec.podLabels: Invalid value: \"" + std::string(64, 'x') + "\": must be no more than 63 characters");
  for (const char* key : kControllerPodLabels)
    EXPECT_EQ(Errors({{"podLabels", {{key, "x"}}}}),
              std::string("spec.podLabels[") + key +
                  "]: Forbidden: the controller sets this label on every pod (the Deployment and the Service select "
                  "the pods by app.kubernetes.io/name and app.kubernetes.io/instance)");
  EXPECT_EQ(Errors({{"podAnnotations", {{"a b", "x"}}}}), "spec.podAnnotations: Invalid value: \"a b\": " + kNameRegex);
  EXPECT_EQ(Errors({{"podAnnotations", {{"big", std::string(256 * 1024, 'x')}}}}),
            "spec.podAnnotations: Too long: may not be more than 262144 bytes");
  EXPECT_EQ(Errors({{"podAnnotations", {{"controller.kubernetes.io/pod-deletion-cost", "+5"}}}}),
            "spec.podAnnotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: \"+5\": must be a 32bit "
            "integer");
  EXPECT_EQ(Errors({{"podAnnotations", {{"controller.kubernetes.io/pod-deletion-cost", "-5"}}}}), "");
  EXPECT_EQ(Errors({{"nodeSelector", {{"pool", 5}}}}),
            "spec.nodeSelector[pool]: Invalid value: 5: must be of type string, not integer");
}

TEST(PodValidationTest, Tolerations) {
  auto tol = [](const json& t) { return Errors({{"tolerations", json::array({t})}}); };
  EXPECT_EQ(tol({{"key", "a b"}, {"operator", "Exists"}}),
            "spec.tolerations[0].key: Invalid value: \"a b\": " + kNameRegex);
  EXPECT_EQ(tol({{"value", "x"}}),
            "spec.tolerations[0].operator: Invalid value: \"\": operator must be Exists when `key` is empty, which "
            "means \"match all values and all keys\"");
  EXPECT_EQ(tol({{"key", "k"}, {"operator", "Exists"}, {"value", "x"}}),
            "spec.tolerations[0].operator: Invalid value: \"x\": value must be empty when `operator` is 'Exists'");
  EXPECT_EQ(tol({{"key", "k"}, {"value", "a b"}}),
            "spec.tolerations[0].operator: Invalid value: \"a b\": " + kLabelValue);
  EXPECT_EQ(tol({{"key", "k"}, {"effect", "NoSchedule"}, {"tolerationSeconds", 5}}),
            "spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
            "`tolerationSeconds` is set");
  EXPECT_EQ(tol({{"key", "k"}, {"operator", "In"}}),
            "spec.tolerations[0].operator: Unsupported value: \"In\": supported values: \"Equal\", \"Exists\"");
  EXPECT_EQ(tol({{"key", "k"}, {"effect", "NoScheduleNoAdmit"}}),
            "spec.tolerations[0].effect: Unsupported value: \"NoScheduleNoAdmit\": supported values: \"NoSchedule\", "
            "\"PreferNoSchedule\", \"NoExecute\"");
}

TEST(PodValidationTest, ServiceAccountAndPullSecrets) {
  EXPECT_EQ(Errors({{"serviceAccountName", "Reader"}}),
            "spec.serviceAccountName: Invalid value: \"Reader\": " + kSubdomain);
  EXPECT_EQ(Errors({{"serviceAccountName", ""}}), "");
  EXPECT_EQ(Warnings({{"imagePullSecrets", {{{"name", "a"}}, {{"name", "a"}}, json::object()}}}),
            "spec.imagePullSecrets[1].name: duplicate name \"a\" | spec.imagePullSecrets[2].name: invalid empty name "
            "\"\"");
}

// As the API server validates a pod's priorityClassName (a PriorityClass
// name, NameIsDNSSubdomain); the length by the schema, once.
TEST(PodValidationTest, PriorityClassName) {
  EXPECT_EQ(Errors({{"priorityClassName", "high-priority"}}), "");
  EXPECT_EQ(Errors({{"priorityClassName", std::string(253, 'p')}}), "");
  EXPECT_EQ(Errors({{"priorityClassName", ""}}), "");
  EXPECT_EQ(Errors({{"priorityClassName", "High_Priority"}}),
            "spec.priorityClassName: Invalid value: \"High_Priority\": " + kSubdomain);
  EXPECT_EQ(Errors({{"priorityClassName", "high."}}),
            "spec.priorityClassName: Invalid value: \"high.\": " + kSubdomain);
  EXPECT_EQ(Errors({{"priorityClassName", std::string(254, 'p')}}),
            "spec.priorityClassName: Too long: may not be more than 253 bytes");
  EXPECT_EQ(Errors({{"priorityClassName", 7}}),
            "spec.priorityClassName: Invalid value: 7: must be of type string, not integer");
}

TEST(PodTemplateTest, GpuTolerationUnlessTheUserHasOne) {
  ModelServiceSpec spec;
  spec.gpus = 1;
  ASSERT_EQ(PodTolerations(spec).size(), 1u);
  EXPECT_EQ(ToJsonValue(PodTolerations(spec)),
            json::parse(R"([{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}])"));
  Toleration mine;
  mine.key = "dedicated";
  mine.operator_ = TolerationOperator::kExists;
  spec.tolerations = std::vector<Toleration>{mine};
  EXPECT_EQ(PodTolerations(spec).size(), 2u);
  mine.key = "nvidia.com/gpu";
  mine.effect = TolerationEffect::kNoExecute;
  spec.tolerations = std::vector<Toleration>{mine};
  ASSERT_EQ(PodTolerations(spec).size(), 1u);  // the user's own for the key
  EXPECT_EQ(PodTolerations(spec)[0].effect, TolerationEffect::kNoExecute);
  spec.gpus = 0;
  spec.tolerations.reset();
  EXPECT_TRUE(PodTolerations(spec).empty());
}

}  // namespace
}  // namespace ms::api
