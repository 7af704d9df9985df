// The model container's fields of the spec (issue 43): ports, probes,
// volumes, shared memory, runtimeClassName, checked through the whole of
// ValidateModelService (the parser, the rules and the schema) in the API
// server's wording (Kubernetes v1.34) and this API's own rules.
#include <gtest/gtest.h>

#include "shared/api/runtimes.h"
#include "shared/api/spec.h"
#include "shared/api/validation.h"
#include "test/support/modelservice_schema.h"

namespace ms::api {
namespace {

using nlohmann::json;

ValidationOutcome With(const json& fields) { return test::ValidateSpecFields(fields); }
std::string Errors(const json& fields) { return test::SpecFieldErrors(fields); }

json HttpProbe(const json& port) { return {{"httpGet", {{"path", "/health"}, {"port", port}}}}; }

TEST(ContainerValidationTest, EveryFieldAtOnceIsValid) {
  const json fields = json::parse(R"({
    "runtime": "vLLM",
    "ports": [{"name": "metrics", "containerPort": 9090}, {"name": "grpc", "containerPort": 9000, "protocol": "TCP"}],
    "command": ["python3", "-m", "server"],
    "readinessProbe": {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 5},
    "livenessProbe": {"tcpSocket": {"port": 8000}, "failureThreshold": 6},
    "startupProbe": {"exec": {"command": ["cat", "/tmp/ready"]}, "failureThreshold": 180, "periodSeconds": 10},
    "securityContext": {"runAsUser": 1000, "runAsGroup": 1000, "fsGroup": 1000},
    "volumes": [{"name": "cache", "mountPath": "/models", "persistentVolumeClaim": {"claimName": "llama"}},
                {"name": "config", "mountPath": "/etc/server", "configMap": {"name": "server-config"}},
                {"name": "token", "mountPath": "/var/run/token", "secret": {"secretName": "hf", "optional": true}},
                {"name": "scratch", "mountPath": "/scratch", "emptyDir": {"sizeLimit": "10Gi"}, "subPath": "a/b"}],
    "sharedMemorySize": "2Gi",
    "runtimeClassName": "nvidia",
    "terminationGracePeriodSeconds": 600})");
  const auto out = With(fields);
  EXPECT_EQ(JoinErrors(out.errors), "");
  EXPECT_TRUE(out.warnings.empty()) << out.warnings.front();
}

TEST(ContainerValidationTest, PortDefaultsToTheRuntimes) {
  const auto port = [](const char* runtime) {
    return *ParseSpec(json{{"model", "m"}, {"runtime", runtime}}).spec.Defaulted().port;
  };
  EXPECT_EQ(port("Custom"), 8080);
  EXPECT_EQ(port("vLLM"), 8000);
  EXPECT_EQ(port("TGI"), 8080);
  EXPECT_EQ(port("Triton"), 8000);
  EXPECT_EQ(port("MLServer"), 8080);
  EXPECT_EQ(*ParseSpec(json{{"model", "m"}}).spec.Defaulted().port, 8080);
  EXPECT_EQ(*ParseSpec(json{{"model", "m"}, {"runtime", "vLLM"}, {"port", 9000}}).spec.Defaulted().port, 9000);
}

TEST(ContainerValidationTest, Ports) {
  EXPECT_EQ(Errors({{"ports", {{{"name", "http"}, {"containerPort", 9090}}}}}),
            "spec.ports[0].name: Invalid value: \"http\": must not be http, the name of spec.port");
  EXPECT_EQ(Errors({{"ports", {{{"name", "Metrics"}, {"containerPort", 9090}}}}}),
            "spec.ports[0].name: Invalid value: \"Metrics\": must contain only alpha-numeric characters (a-z, 0-9), "
            "and hyphens (-)");
  EXPECT_EQ(Errors({{"ports", {{{"name", "a--b"}, {"containerPort", 9090}}}}}),
            "spec.ports[0].name: Invalid value: \"a--b\": must not contain consecutive hyphens");
  EXPECT_EQ(Errors({{"ports", {{{"name", "9090"}, {"containerPort", 9090}}}}}),
            "spec.ports[0].name: Invalid value: \"9090\": must contain at least one letter (a-z)");
  EXPECT_EQ(Errors({{"ports", {{{"name", "m"}, {"containerPort", 9090}}, {{"name", "m"}, {"containerPort", 9091}}}}}),
            "spec.ports[1].name: Duplicate value: \"m\"");
  EXPECT_EQ(Errors({{"ports", {{{"name", "m"}, {"containerPort", 8080}}}}}),
            "spec.ports[0].containerPort: Invalid value: 8080: must differ from spec.port, the port named http");
  EXPECT_EQ(Errors({{"ports", {{{"name", "a"}, {"containerPort", 9090}}, {{"name", "b"}, {"containerPort", 9090}}}}}),
            "spec.ports[1].containerPort: Duplicate value: 9090");
  // The same number over UDP is another port.
  EXPECT_EQ(Errors({{"ports", {{{"name", "a"}, {"containerPort", 8080}, {"protocol", "UDP"}}}}}), "");
}

TEST(ContainerValidationTest, ProbeHandlers) {
  EXPECT_EQ(Errors({{"readinessProbe", {{"periodSeconds", 5}}}}),
            "spec.readinessProbe: Required value: must specify a handler type");
  EXPECT_EQ(Errors({{"readinessProbe", {{"exec", {{"command", {"true"}}}}, {"tcpSocket", {{"port", 8080}}}}}}),
            "spec.readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type");
  EXPECT_EQ(Errors({{"livenessProbe", {{"exec", json::object()}}}}), "spec.livenessProbe.exec.command: Required value");
  // An empty path is the API server's "/".
  EXPECT_EQ(Errors({{"readinessProbe", {{"httpGet", {{"port", "http"}}}}}}), "");
}

TEST(ContainerValidationTest, ProbePorts) {
  EXPECT_EQ(Errors({{"readinessProbe", HttpProbe(0)}})
                .find("spec.readinessProbe.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive"),
            0u);
  EXPECT_EQ(Errors({{"startupProbe", HttpProbe("metrics")}}),
            "spec.startupProbe.httpGet.port: Invalid value: \"metrics\": must be a port of the model container: "
            "http or a name of spec.ports");
  EXPECT_EQ(
      Errors({{"startupProbe", HttpProbe("metrics")}, {"ports", {{{"name", "metrics"}, {"containerPort", 9090}}}}}),
      "");
  EXPECT_EQ(Errors({{"livenessProbe", {{"tcpSocket", {{"port", "-x"}}}}}})
                .find("spec.livenessProbe.tcpSocket.port: Invalid value: \"-x\": must not begin or end with a hyphen"),
            0u);
  EXPECT_NE(Errors({{"readinessProbe", HttpProbe(true)}})
                .find("spec.readinessProbe.httpGet.port: Invalid value: true: must be of type integer or string, not "
                      "boolean"),
            std::string::npos);
}

TEST(ContainerValidationTest, SuccessThresholdOfLivenessAndStartupIsOne) {
  json probe = HttpProbe("http");
  probe["successThreshold"] = 2;
  EXPECT_EQ(Errors({{"readinessProbe", probe}}), "");
  EXPECT_EQ(Errors({{"livenessProbe", probe}}), "spec.livenessProbe.successThreshold: Invalid value: 2: must be 1");
  EXPECT_EQ(Errors({{"startupProbe", probe}}), "spec.startupProbe.successThreshold: Invalid value: 2: must be 1");
}

TEST(ContainerValidationTest, Volumes) {
  const auto one = [](json v) { return json{{"volumes", json::array({std::move(v)})}}; };
  EXPECT_EQ(Errors(one({{"name", "a"}, {"mountPath", "/a"}})),
            "spec.volumes[0]: Required value: must specify a volume type");
  EXPECT_EQ(Errors(one(
                {{"name", "a"}, {"mountPath", "/a"}, {"emptyDir", json::object()}, {"secret", {{"secretName", "s"}}}})),
            "spec.volumes[0].secret: Forbidden: may not specify more than 1 volume type");
  EXPECT_EQ(Errors(one({{"name", "A"}, {"mountPath", "/a"}, {"emptyDir", json::object()}})),
            "spec.volumes[0].name: Invalid value: \"A\": a lowercase RFC 1123 label must consist of lower case "
            "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  "
            "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
  EXPECT_EQ(Errors(one({{"name", "dshm"}, {"mountPath", "/a"}, {"emptyDir", json::object()}})),
            "spec.volumes[0].name: Invalid value: \"dshm\": must not be dshm, the name of the shared memory volume "
            "(spec.sharedMemorySize)");
  EXPECT_EQ(Errors(one({{"name", "a"}, {"mountPath", "models"}, {"emptyDir", json::object()}})),
            "spec.volumes[0].mountPath: Invalid value: \"models\": must be an absolute path");
  EXPECT_EQ(Errors(one({{"name", "a"}, {"mountPath", "/dev/shm"}, {"emptyDir", json::object()}})),
            "spec.volumes[0].mountPath: Invalid value: \"/dev/shm\": must not be /dev/shm: set its size with "
            "spec.sharedMemorySize");
  EXPECT_EQ(Errors(one({{"name", "a"}, {"mountPath", "/a"}, {"subPath", "../x"}, {"emptyDir", json::object()}})),
            "spec.volumes[0].subPath: Invalid value: \"../x\": must not contain '..'");
  EXPECT_EQ(Errors(one({{"name", "a"}, {"mountPath", "/a"}, {"subPath", "/x"}, {"emptyDir", json::object()}})),
            "spec.volumes[0].subPath: Invalid value: \"/x\": must be a relative path");
  EXPECT_EQ(Errors(one({{"name", "a"}, {"mountPath", "/a"}, {"secret", {{"secretName", ""}}}})),
            "spec.volumes[0].secret.secretName: Required value");
  EXPECT_EQ(Errors(one({{"name", "a"}, {"mountPath", "/a"}, {"emptyDir", {{"sizeLimit", "-1Gi"}}}})),
            "spec.volumes[0].emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity");
  EXPECT_EQ(Errors({{"volumes",
                     {{{"name", "a"}, {"mountPath", "/a"}, {"emptyDir", json::object()}},
                      {{"name", "a"}, {"mountPath", "/a"}, {"emptyDir", json::object()}}}}}),
            "spec.volumes[1].name: Duplicate value: \"a\"; spec.volumes[1].mountPath: Invalid value: \"/a\": must be "
            "unique");
}

TEST(ContainerValidationTest, SharedMemoryAndRuntimeClass) {
  EXPECT_EQ(Errors({{"sharedMemorySize", "0"}}), "spec.sharedMemorySize: Invalid value: \"0\": must be greater than 0");
  EXPECT_EQ(Errors({{"runtimeClassName", "Nvidia"}})
                .find("spec.runtimeClassName: Invalid value: \"Nvidia\": a "
                      "lowercase RFC 1123 subdomain"),
            0u);
}

TEST(ContainerValidationTest, PresetsAreValid) {
  // Every runtime's preset, as a spec, passes the same checks.
  for (const char* runtime : kRuntimeNames) {
    const RuntimePreset& p = Preset(*ParseSpec(json{{"model", "m"}, {"runtime", runtime}}).spec.runtime);
    json fields = {{"runtime", runtime}};
    if (p.readiness) fields["readinessProbe"] = ToJsonValue(*p.readiness);
    if (p.liveness) fields["livenessProbe"] = ToJsonValue(*p.liveness);
    if (p.startup) fields["startupProbe"] = ToJsonValue(*p.startup);
    if (!p.ports.empty()) fields["ports"] = ToJsonValue(p.ports);
    if (p.shared_memory) fields["sharedMemorySize"] = ToJsonValue(*p.shared_memory);
    EXPECT_EQ(Errors(fields), "") << runtime;
  }
}

}  // namespace
}  // namespace ms::api
