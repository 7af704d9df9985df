// The parts of the pod template the runtime and the spec set together
// (issue 43): the model container's command, args, variables, ports, probes
// and volume mounts, the pod's volumes, user and grace period; a Deployment
// as the API server returns it has no drift (one written before these fields
// existed included: no rollout on upgrade), a hand edit is put back.
#include "controller/modelservice/container_fields.h"

#include <gtest/gtest.h>

#include "controller/modelservice/desired.h"

namespace ms::modelservice {
namespace {

using nlohmann::json;

ResolvedSpec Resolve(json spec) {
  if (!spec.contains("model")) spec["model"] = "llama";
  return ResolveSpec({{"apiVersion", "modelops.dev/v1"},
                      {"kind", "ModelService"},
                      {"metadata", {{"name", "llm"}, {"namespace", "ml"}, {"uid", "u1"}}},
                      {"spec", spec}},
                     Options{});
}

const json& PodSpec(const json& d) { return d["spec"]["template"]["spec"]; }
const json& Model(const json& d) { return PodSpec(d)["containers"][0]; }

const json kCustomReadiness = json::parse(R"j({"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
  "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})j");

TEST(ContainerFields, CustomKeepsTodaysContainer) {
  const json d = DesiredDeployment(Resolve(json::object()), 1);
  const json& c = Model(d);
  EXPECT_EQ(c["ports"], json::parse(R"j([{"name": "http", "containerPort": 8080, "protocol": "TCP"}])j"));
  EXPECT_EQ(c["readinessProbe"], kCustomReadiness);
  for (const char* absent : {"command", "args", "livenessProbe", "startupProbe", "volumeMounts"})
    EXPECT_FALSE(c.contains(absent)) << absent;
  EXPECT_EQ(c["env"], json::parse(R"j([{"name": "MODEL_NAME", "value": "llama"}, {"name": "MODEL_VERSION"}])j"));
  EXPECT_FALSE(PodSpec(d).contains("volumes"));
  EXPECT_EQ(PodSpec(d)["terminationGracePeriodSeconds"], 30);
}

TEST(ContainerFields, ADeploymentWrittenBeforeHasNoDrift) {
  // The model container as the controller wrote it before issue 43, as the
  // API server returns it (its probe defaults and grace period filled in).
  const ResolvedSpec s = Resolve(json::object());
  json current = DesiredDeployment(s, 1);
  json& pod = current["spec"]["template"]["spec"];
  pod.erase("terminationGracePeriodSeconds");
  json& c = pod["containers"][0];
  c["readinessProbe"] = {{"httpGet", {{"path", "/healthz"}, {"port", "http"}}}};
  ASSERT_NE(RepairDeployment(s, 1, current), Drift{});  // the unserved form differs...
  c = Model(current);
  json served = DesiredDeployment(s, 1);
  served["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 30;                  // SetDefaults_PodSpec
  served["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] = kCustomReadiness;  // SetDefaults_Probe
  EXPECT_EQ(RepairDeployment(s, 1, served), Drift{});  // ...the served one does not
}

TEST(ContainerFields, VLLMPreset) {
  const json d = DesiredDeployment(Resolve({{"runtime", "vLLM"}, {"args", {"--max-model-len=4096"}}}), 1);
  const json& c = Model(d);
  EXPECT_EQ(c["args"], json::parse(R"j(["--model=$(MODEL_NAME)", "--port=8000", "--max-model-len=4096"])j"));
  EXPECT_EQ(c["ports"], json::parse(R"j([{"name": "http", "containerPort": 8000, "protocol": "TCP"}])j"));
  EXPECT_EQ(c["readinessProbe"], json::parse(R"j({"httpGet": {"path": "/health", "port": "http", "scheme": "HTTP"},
    "timeoutSeconds": 5, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})j"));
  EXPECT_EQ(c["startupProbe"]["failureThreshold"], 180);
  EXPECT_EQ(c["livenessProbe"]["httpGet"]["path"], "/health");
  EXPECT_EQ(c["volumeMounts"], json::parse(R"j([{"name": "dshm", "mountPath": "/dev/shm"}])j"));
  EXPECT_EQ(PodSpec(d)["volumes"],
            json::parse(R"j([{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "2Gi"}}])j"));
  EXPECT_EQ(d["spec"]["template"]["spec"]["containers"][0]["env"].size(), 2u);
}

TEST(ContainerFields, TGIAndMLServerVariables) {
  EXPECT_EQ(Model(DesiredDeployment(Resolve({{"runtime", "TGI"}}), 1))["env"], json::parse(R"j([
    {"name": "MODEL_NAME", "value": "llama"}, {"name": "MODEL_VERSION"},
    {"name": "MODEL_ID", "value": "$(MODEL_NAME)"}, {"name": "PORT", "value": "8080"}])j"));
  // spec.env overrides a runtime's variable by name (and comes last).
  const json c = Model(DesiredDeployment(
      Resolve({{"runtime", "MLServer"}, {"env", {{{"name", "MLSERVER_METRICS_PORT"}, {"value", "9"}}}}}), 1));
  EXPECT_EQ(c["env"], json::parse(R"j([
    {"name": "MODEL_NAME", "value": "llama"}, {"name": "MODEL_VERSION"},
    {"name": "MLSERVER_MODEL_NAME", "value": "$(MODEL_NAME)"
  }, {"name": "MLSERVER_MODEL_VERSION", "value": "$(MODEL_VERSION)"},
    {"name": "MLSERVER_HTTP_PORT", "value": "8080"}, {"name": "MLSERVER_METRICS_PORT", "value": "9"}])j"));
  EXPECT_EQ(c["ports"], json::parse(R"j([{"name": "http", "containerPort": 8080, "protocol": "TCP"},
    {"name": "metrics", "containerPort": 8082, "protocol": "TCP"}])j"));
}

TEST(ContainerFields, TheSpecOverridesThePreset) {
  const json d =
      DesiredDeployment(Resolve(json::parse(R"j({"runtime": "Triton", "command": ["/bin/server"], "args": ["-v"],
        "ports": [{"name": "metrics", "containerPort": 9102}, {"name": "grpc", "containerPort": 8001}],
        "readinessProbe": {"tcpSocket": {"port": "grpc"}, "initialDelaySeconds": 0},
        "sharedMemorySize": "4096Mi",
        "volumes": [{"name": "repo", "mountPath": "/models", "persistentVolumeClaim": {"claimName": "triton"}},
                    {"name": "tmp", "mountPath": "/tmp", "emptyDir": {}},
                    {"name": "cfg", "mountPath": "/etc/cfg", "configMap": {"name": "c"}, "readOnly": false}],
        "securityContext": {"runAsUser": 1000, "fsGroup": 2000},
        "runtimeClassName": "nvidia", "terminationGracePeriodSeconds": 600})j")),
                        1);
  const json& c = Model(d);
  EXPECT_EQ(c["command"], json::parse(R"j(["/bin/server"])j"));
  EXPECT_EQ(c["args"], json::parse(R"j(["-v"])j"));  // no preset arguments with a command of one's own
  EXPECT_EQ(c["ports"], json::parse(R"j([{"name": "http", "containerPort": 8000, "protocol": "TCP"},
    {"name": "metrics", "containerPort": 9102, "protocol": "TCP"}, {"name": "grpc", "containerPort": 8001, "protocol": "TCP"}])j"));
  EXPECT_EQ(c["readinessProbe"], json::parse(R"j({"tcpSocket": {"port": "grpc"},
    "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})j"));
  EXPECT_EQ(c["volumeMounts"], json::parse(R"j([{"name": "repo", "mountPath": "/models", "readOnly": true},
    {"name": "tmp", "mountPath": "/tmp"}, {"name": "cfg", "mountPath": "/etc/cfg"},
    {"name": "dshm", "mountPath": "/dev/shm"}])j"));
  const json& pod = PodSpec(d);
  EXPECT_EQ(pod["volumes"], json::parse(R"j([{"name": "repo", "persistentVolumeClaim": {"claimName": "triton"}},
    {"name": "tmp", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "c", "defaultMode": 420}},
    {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "4Gi"}}])j"));
  EXPECT_EQ(pod["securityContext"], json::parse(R"j({"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"},
    "runAsUser": 1000, "fsGroup": 2000})j"));
  EXPECT_EQ(pod["runtimeClassName"], "nvidia");
  EXPECT_EQ(pod["terminationGracePeriodSeconds"], 600);
}

TEST(ContainerFields, HandEditsArePutBackAndSizesCompareByValue) {
  const ResolvedSpec s = Resolve({{"runtime", "vLLM"}, {"securityContext", {{"runAsUser", 1000}}}});
  json current = DesiredDeployment(s, 1);
  json& pod = current["spec"]["template"]["spec"];
  pod["volumes"][0]["emptyDir"]["sizeLimit"] = "2048Mi";  // the same size
  EXPECT_EQ(RepairDeployment(s, 1, current), Drift{});
  pod["containers"][0].erase("livenessProbe");
  pod["containers"][0]["startupProbe"]["failureThreshold"] = 3;
  pod["containers"][0]["args"] = json::array({"--model=x"});
  pod["volumes"][0]["emptyDir"]["sizeLimit"] = "64Mi";
  pod["securityContext"].erase("runAsUser");
  const Drift drift = RepairDeployment(s, 1, current);
  EXPECT_EQ(drift, (Drift{"spec.template.spec.volumes", "spec.template.spec.securityContext.runAsUser", "args",
                          "livenessProbe", "startupProbe"}));
  EXPECT_EQ(current["spec"]["template"], DesiredDeployment(s, 1)["spec"]["template"]);
  EXPECT_EQ(RepairDeployment(s, 1, current), Drift{});
}

TEST(ContainerFields, ChangingTheRuntimeRemovesItsParts) {
  const ResolvedSpec vllm = Resolve({{"runtime", "vLLM"}});
  json current = DesiredDeployment(vllm, 1);
  const ResolvedSpec custom = Resolve(json::object());
  RepairDeployment(custom, 1, current);
  EXPECT_EQ(current, DesiredDeployment(custom, 1));
}

// Where each runtime's metrics are, for the PodMonitor's relabelling: the
// metrics port's number (spec.ports may move it) and path; Custom pods carry
// nothing new (no roll on upgrade).
TEST(ContainerFields, TheMetricsAnnotationsOfEachRuntime) {
  auto annotations = [](const json& spec) {
    const json d = DesiredDeployment(Resolve(spec), 1);
    return d["spec"]["template"]["metadata"].value("annotations", json::object());
  };
  EXPECT_EQ(annotations(json::object()), json::object());
  EXPECT_EQ(annotations({{"runtime", "MLServer"}}),
            json::parse(R"j({"modelops.dev/metrics-path": "/metrics", "modelops.dev/metrics-port": "8082"})j"));
  EXPECT_EQ(annotations({{"runtime", "vLLM"}}),
            json::parse(R"j({"modelops.dev/metrics-path": "/metrics", "modelops.dev/metrics-port": "8000"})j"));
  EXPECT_EQ(annotations({{"runtime", "Triton"}, {"ports", {{{"name", "metrics"}, {"containerPort", 9102}}}}}),
            json::parse(R"j({"modelops.dev/metrics-path": "/metrics", "modelops.dev/metrics-port": "9102"})j"));
  // A hand edit is put back; going back to Custom removes them.
  const ResolvedSpec tgi = Resolve({{"runtime", "TGI"}, {"port", 3000}});
  json current = DesiredDeployment(tgi, 1);
  EXPECT_EQ(current["spec"]["template"]["metadata"]["annotations"]["modelops.dev/metrics-port"], "3000");
  current["spec"]["template"]["metadata"]["annotations"]["modelops.dev/metrics-port"] = "1";
  EXPECT_EQ(RepairDeployment(tgi, 1, current), Drift{"spec.template.metadata.annotations"});
  EXPECT_EQ(current, DesiredDeployment(tgi, 1));
  const ResolvedSpec custom = Resolve(json::object());
  RepairDeployment(custom, 1, current);
  EXPECT_EQ(current, DesiredDeployment(custom, 1));
}

}  // namespace
}  // namespace ms::modelservice
