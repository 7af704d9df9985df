// The pod fields of a ModelService (issue 21) in the Deployment the
// controller writes, and their repair: what the spec asks for is in the pod
// template, the hardened defaults too, a Deployment as the API server returns
// it has no drift, every owned field edited by hand is put back, and what the
// controller does not own stays.
#include "controller/modelservice/pod_fields.h"

#include <gtest/gtest.h>

#include "controller/modelservice/desired.h"

namespace ms::modelservice {
namespace {

using nlohmann::json;

ResolvedSpec Resolve(const json& spec) {
  return ResolveSpec({{"apiVersion", "modelops.dev/v1"},
                      {"kind", "ModelService"},
                      {"metadata", {{"name", "llm"}, {"namespace", "ml"}, {"uid", "u1"}}},
                      {"spec", spec}},
                     Options{});
}

const json kSpec = json::parse(R"({
  "model": "llama", "version": "2", "gpus": 1,
  "resources": {"requests": {"cpu": "0.5", "memory": "1024Mi"}, "limits": {"memory": "2Gi", "ephemeral-storage": 10}},
  "env": [{"name": "HF_HOME", "value": "/cache"}, {"name": "EMPTY", "value": ""},
          {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}],
  "args": ["--max-batch", "8"],
  "nodeSelector": {"pool": "a100"},
  "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}],
  "imagePullSecrets": [{"name": "regcred"}],
  "priorityClassName": "model-serving",
  "podAnnotations": {"prometheus.io/scrape": "true"},
  "podLabels": {"team": "nlp"}})");

const json& PodSpec(const json& d) { return d["spec"]["template"]["spec"]; }
const json& Model(const json& d) { return PodSpec(d)["containers"][0]; }

// What the API server returns for a Deployment it was sent: quantities in
// canonical form, empty strings omitted, serviceAccount mirrored, a few of
// its defaults.
json AsServed(json d) {
  json& pod = d["spec"]["template"]["spec"];
  json& c = pod["containers"][0];
  if (c["resources"].contains("requests")) {
    if (c["resources"]["requests"].contains("cpu")) c["resources"]["requests"]["cpu"] = "500m";
    if (c["resources"]["requests"].contains("memory")) c["resources"]["requests"]["memory"] = "1Gi";
  }
  if (c["resources"].contains("limits") && c["resources"]["limits"].contains("ephemeral-storage"))
    c["resources"]["limits"]["ephemeral-storage"] = "10";
  for (auto& e : c["env"])
    if (e.contains("value") && e["value"] == "") e.erase("value");
  if (pod.contains("serviceAccountName")) pod["serviceAccount"] = pod["serviceAccountName"];
  c["terminationMessagePath"] = "/dev/termination-log";
  c["imagePullPolicy"] = "IfNotPresent";
  pod["restartPolicy"] = "Always";
  d["metadata"]["resourceVersion"] = "7";
  return d;
}

TEST(PodFields, TheDeploymentCarriesThemAndTheHardenedDefaults) {
  const json d = DesiredDeployment(Resolve(kSpec), 1);
  EXPECT_EQ(d["spec"]["template"]["metadata"], json::parse(R"({
    "labels": {"app.kubernetes.io/instance": "llm", "app.kubernetes.io/managed-by": "modelservice-controller",
               "app.kubernetes.io/name": "modelservice", "team": "nlp"},
    "annotations": {"prometheus.io/scrape": "true"}})"));
  json pod = PodSpec(d);
  pod.erase("containers");
  EXPECT_EQ(pod, json::parse(R"({
    "nodeSelector": {"pool": "a100"},
    "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"},
                    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "imagePullSecrets": [{"name": "regcred"}],
    "priorityClassName": "model-serving",
    "automountServiceAccountToken": false,
    "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
    "terminationGracePeriodSeconds": 30})"));
  const json& c = Model(d);
  EXPECT_EQ(c["args"], json::parse(R"(["--max-batch", "8"])"));
  EXPECT_EQ(c["env"], json::parse(R"([{"name": "MODEL_NAME", "value": "llama"}, {"name": "MODEL_VERSION", "value": "2"},
    {"name": "HF_HOME", "value": "/cache"}, {"name": "EMPTY"},
    {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}])"));
  EXPECT_EQ(c["resources"], json::parse(R"({"requests": {"cpu": "0.5", "memory": "1024Mi"},
    "limits": {"nvidia.com/gpu": "1", "memory": "2Gi", "ephemeral-storage": "10"}})"));
  EXPECT_EQ(c["securityContext"],
            json::parse(R"({"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}})"));
  EXPECT_EQ(d["metadata"]["annotations"][kPodKeysAnnotation],
            R"({"annotations":["prometheus.io/scrape"],"env":["EMPTY","HF_HOME","TOKEN"],"labels":["team"]})");
}

TEST(PodFields, GpuTolerationUnlessTheUserHasOneForTheKey) {
  auto tolerations = [](const json& spec) {
    return PodSpec(DesiredDeployment(Resolve(spec), 1)).value("tolerations", json());
  };
  EXPECT_EQ(tolerations({{"model", "m"}, {"gpus", 2}}),
            json::parse(R"([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])"));
  EXPECT_EQ(tolerations({{"model", "m"},
                         {"gpus", 2},
                         {"tolerations", {{{"key", "nvidia.com/gpu"}, {"operator", "Equal"}, {"value", "a100"}}}}}),
            json::parse(R"([{"key": "nvidia.com/gpu", "operator": "Equal", "value": "a100"}])"));
  EXPECT_EQ(tolerations({{"model", "m"}}), json());
  // Without pod fields the template has only the hardened defaults.
  const json d = DesiredDeployment(Resolve({{"model", "m"}}), 1);
  EXPECT_FALSE(d["metadata"].contains("annotations"));
  EXPECT_FALSE(d["spec"]["template"]["metadata"].contains("annotations"));
  EXPECT_FALSE(Model(d).contains("args"));
  EXPECT_EQ(Model(d)["resources"], json::object());
}

TEST(PodFields, AServiceAccountGetsItsTokenMounted) {
  const json pod = PodSpec(DesiredDeployment(Resolve({{"model", "m"}, {"serviceAccountName", "reader"}}), 1));
  EXPECT_EQ(pod["serviceAccountName"], "reader");
  EXPECT_FALSE(pod.contains("automountServiceAccountToken"));
  EXPECT_FALSE(pod.contains("serviceAccount"));
}

TEST(PodFields, TheServedDeploymentHasNoDrift) {
  for (const json& spec : {kSpec, json{{"model", "m"}}, json{{"model", "m"}, {"serviceAccountName", "reader"}}}) {
    const ResolvedSpec s = Resolve(spec);
    const json served = AsServed(DesiredDeployment(s, 1));
    json current = served;
    EXPECT_EQ(RepairDeployment(s, 1, current), Drift{}) << spec.dump();
    EXPECT_EQ(current, served);
  }
}

TEST(PodFields, HandEditsOfOwnedFieldsAreRepaired) {
  const ResolvedSpec s = Resolve(kSpec);
  const json served = AsServed(DesiredDeployment(s, 1));
  json edited = served;
  json& pod = edited["spec"]["template"]["spec"];
  json& c = pod["containers"][0];
  edited["spec"]["template"]["metadata"]["labels"]["team"] = "search";
  edited["spec"]["template"]["metadata"]["annotations"].erase("prometheus.io/scrape");
  pod["nodeSelector"]["pool"] = "t4";
  pod["tolerations"].erase(1);
  pod["imagePullSecrets"] = json::array();
  pod["priorityClassName"] = "system-cluster-critical";
  pod["automountServiceAccountToken"] = true;
  pod["securityContext"]["runAsNonRoot"] = false;
  c["args"] = json::array({"--evil"});
  c["env"][2]["value"] = "/tmp";
  c["resources"]["limits"]["memory"] = "1Gi";
  c["resources"]["requests"].erase("cpu");
  c["securityContext"]["capabilities"]["drop"] = json::array();
  json current = edited;
  const Drift drift = RepairDeployment(s, 1, current);
  EXPECT_EQ(drift, (Drift{"spec.template.metadata.labels", "spec.template.metadata.annotations",
                          "spec.template.spec.nodeSelector", "spec.template.spec.tolerations",
                          "spec.template.spec.imagePullSecrets", "spec.template.spec.priorityClassName",
                          "spec.template.spec.automountServiceAccountToken",
                          "spec.template.spec.securityContext.runAsNonRoot", "args", "env", "resources.requests.cpu",
                          "resources.limits.memory", "securityContext.capabilities"}));
  json want = served;
  want["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "0.5";
  want["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"] = "2Gi";
  EXPECT_EQ(current, want);
}

TEST(PodFields, WhatTheControllerDoesNotOwnStays) {
  const ResolvedSpec s = Resolve(kSpec);
  json current = AsServed(DesiredDeployment(s, 1));
  json& tmpl = current["spec"]["template"];
  tmpl["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"] = "2026-12-01T10:00:00Z";
  tmpl["metadata"]["labels"]["sidecar.istio.io/inject"] = "false";
  tmpl["spec"]["securityContext"]["supplementalGroups"] = {2000};
  json& c = tmpl["spec"]["containers"][0];
  c["env"].push_back({{"name", "EXTRA"}, {"value", "1"}});
  c["resources"]["limits"]["hugepages-2Mi"] = "1Gi";
  c["securityContext"]["runAsUser"] = 1000;
  const json before = current;
  EXPECT_EQ(RepairDeployment(s, 1, current), Drift{});
  EXPECT_EQ(current, before);
}

// A key that leaves the spec leaves the template (the record says the
// controller wrote it); keys that others wrote stay.
TEST(PodFields, KeysThatLeaveTheSpecLeaveTheTemplate) {
  json current = AsServed(DesiredDeployment(Resolve(kSpec), 1));
  json& tmpl = current["spec"]["template"];
  tmpl["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"] = "t";
  tmpl["spec"]["containers"][0]["env"].push_back({{"name", "EXTRA"}, {"value", "1"}});
  json spec = kSpec;
  spec.erase("podAnnotations");
  spec.erase("podLabels");
  spec["env"] = json::array({{{"name", "HF_HOME"}, {"value", "/cache"}}});
  for (const char* field :
       {"resources", "args", "nodeSelector", "tolerations", "imagePullSecrets", "priorityClassName"})
    spec.erase(field);
  spec["gpus"] = 0;
  const ResolvedSpec s = Resolve(spec);
  const Drift drift = RepairDeployment(s, 1, current);
  EXPECT_FALSE(drift.empty());
  EXPECT_EQ(tmpl["metadata"]["annotations"], json::parse(R"({"kubectl.kubernetes.io/restartedAt": "t"})"));
  EXPECT_FALSE(tmpl["metadata"]["labels"].contains("team"));
  json pod = tmpl["spec"];
  const json c = pod["containers"][0];
  EXPECT_EQ(c["env"], json::parse(R"([{"name": "MODEL_NAME", "value": "llama"}, {"name": "MODEL_VERSION", "value": "2"},
    {"name": "HF_HOME", "value": "/cache"}, {"name": "EXTRA", "value": "1"}])"));
  EXPECT_EQ(c["resources"], json::object());
  EXPECT_FALSE(c.contains("args"));
  for (const char* field : {"nodeSelector", "tolerations", "imagePullSecrets", "priorityClassName"})
    EXPECT_FALSE(pod.contains(field)) << field;
  EXPECT_EQ(current["metadata"]["annotations"][kPodKeysAnnotation], R"({"env":["HF_HOME"]})");
  // Then nothing more.
  json again = current;
  EXPECT_EQ(RepairDeployment(s, 1, again), Drift{});
}

TEST(PodFields, ChangingThemRollsThePods) {
  json other = kSpec;
  other["env"][0]["value"] = "/other";
  EXPECT_NE(Resolve(kSpec).spec_hash, Resolve(other).spec_hash);
  other = kSpec;
  other["priorityClassName"] = "batch";
  EXPECT_NE(Resolve(kSpec).spec_hash, Resolve(other).spec_hash);
  // An empty name is no name: the template has none (the cluster's default).
  other["priorityClassName"] = "";
  EXPECT_FALSE(PodSpec(DesiredDeployment(Resolve(other), 1)).contains("priorityClassName"));
}

}  // namespace
}  // namespace ms::modelservice

namespace ms::modelservice {
namespace {

// spec.affinity and spec.topologySpreadConstraints: in the template as the
// API server returns them (empty lists and matchLabels omitted, an empty
// selector kept), so a served Deployment has no drift; a hand edit is put back.
TEST(PodFields, AffinityAndSpreadAsTheApiServerReturnsThem) {
  const json spec = json::parse(R"({"model": "m",
    "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
      {"labelSelector": {"matchLabels": {}, "matchExpressions": [{"key": "app", "operator": "Exists", "values": []}]},
       "namespaceSelector": {}, "namespaces": [], "topologyKey": "kubernetes.io/hostname"}]}},
    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
                                   "labelSelector": {"matchLabels": {"app": "x"}}}]})");
  const ResolvedSpec s = Resolve(spec);
  const json d = DesiredDeployment(s, 1);
  EXPECT_EQ(PodSpec(d)["affinity"],
            json::parse(R"({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
      {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}, "namespaceSelector": {},
       "topologyKey": "kubernetes.io/hostname"}]}})"));
  EXPECT_EQ(PodSpec(d)["topologySpreadConstraints"], spec["topologySpreadConstraints"]);
  json current = AsServed(d);
  EXPECT_EQ(RepairDeployment(s, 1, current), Drift{});

  current["spec"]["template"]["spec"].erase("affinity");
  current["spec"]["template"]["spec"]["topologySpreadConstraints"][0]["maxSkew"] = 3;
  EXPECT_EQ(RepairDeployment(s, 1, current),
            (Drift{"spec.template.spec.affinity", "spec.template.spec.topologySpreadConstraints"}));
  EXPECT_EQ(current, AsServed(d));

  // Without them in the spec, the controller removes them.
  const ResolvedSpec plain = Resolve({{"model", "m"}});
  EXPECT_EQ(RepairDeployment(plain, 1, current),
            (Drift{"spec.template.spec.affinity", "spec.template.spec.topologySpreadConstraints"}));
  EXPECT_FALSE(PodSpec(current).contains("affinity"));
  EXPECT_FALSE(PodSpec(current).contains("topologySpreadConstraints"));
}

}  // namespace
}  // namespace ms::modelservice
