// spec.affinity and spec.topologySpreadConstraints, validated as the API
// server validates a pod template's (Kubernetes v1.34 wording, on the
// ModelService's paths), through the whole of ValidateModelService. The
// expected messages are the API server's: e2e case 34 also compares the
// webhook's verdict with `kubectl apply --dry-run=server` of the Deployment.
#include <gtest/gtest.h>

#include "shared/api/validation.h"
#include "test/support/modelservice_schema.h"

namespace ms::api {
namespace {

using nlohmann::json;

std::string Errors(const char* member, const json& value) {
  json o = {{"apiVersion", "modelops.dev/v1"},
            {"kind", "ModelService"},
            {"metadata", {{"name", "m"}}},
            {"spec", {{"model", "m"}, {member, value}}}};
  return JoinErrors(ValidateModelService(o).errors);
}
std::string Affinity(const json& v) { return Errors("affinity", v); }
std::string Spread(const json& v) { return Errors("topologySpreadConstraints", v); }

// nodeAffinity.required with one term made of `expression`.
json NodeRequired(const json& expression) {
  return {{"nodeAffinity",
           {{"requiredDuringSchedulingIgnoredDuringExecution",
             {{"nodeSelectorTerms", {{{"matchExpressions", {expression}}}}}}}}}};
}
// podAntiAffinity.preferred with one term of `selector` and `key`.
json AntiPreferred(const json& selector, const std::string& key) {
  return {{"podAntiAffinity",
           {{"preferredDuringSchedulingIgnoredDuringExecution",
             {{{"weight", 10}, {"podAffinityTerm", {{"labelSelector", selector}, {"topologyKey", key}}}}}}}}};
}

const char* kNodeTerm =
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
    "matchExpressions[0]";
const char* kAntiTerm =
    "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm";

TEST(SchedulingValidationTest, WhatUsersWriteIsValid) {
  const json affinity = json::parse(R"({
    "nodeAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-A100-SXM4-80GB"]},
                              {"key": "nvidia.com/gpu.memory", "operator": "Gt", "values": ["40000"]}]}]},
      "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 50, "preference": {"matchExpressions": [{"key": "spot", "operator": "DoesNotExist"}]}}]},
    "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "topology.kubernetes.io/zone",
         "namespaces": ["shared"], "namespaceSelector": {}}]},
    "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "podAffinityTerm": {
          "labelSelector": {"matchExpressions": [{"key": "app.kubernetes.io/instance", "operator": "In",
                                                  "values": ["m"]}]},
          "topologyKey": "kubernetes.io/hostname"}}]}})");
  EXPECT_EQ(Affinity(affinity), "");
  const json spread = json::parse(R"([
    {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
     "minDomains": 2, "nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Ignore",
     "labelSelector": {"matchLabels": {"app.kubernetes.io/instance": "m"}}},
    {"maxSkew": 2, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}])");
  EXPECT_EQ(Spread(spread), "");
}

TEST(SchedulingValidationTest, NodeSelectorRequirementsByOperator) {
  EXPECT_EQ(Affinity(NodeRequired({{"key", "pool"}, {"operator", "In"}})),
            std::string(kNodeTerm) + ".values: Required value: must be specified when `operator` is 'In' or 'NotIn'");
  EXPECT_EQ(Affinity(NodeRequired({{"key", "pool"}, {"operator", "Exists"}, {"values", {"a"}}})),
            std::string(kNodeTerm) +
                ".values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
  EXPECT_EQ(Affinity(NodeRequired({{"key", "mem"}, {"operator", "Gt"}, {"values", {"1", "2"}}})),
            std::string(kNodeTerm) +
                ".values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'");
  EXPECT_EQ(Affinity(NodeRequired({{"key", "a b"}, {"operator", "Exists"}})),
            std::string(kNodeTerm) +
                ".key: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  EXPECT_EQ(Affinity(NodeRequired({{"key", "pool"}, {"operator", "Near"}})),
            std::string(kNodeTerm) +
                ".operator: Unsupported value: \"Near\": supported values: \"In\", \"NotIn\", \"Exists\", "
                "\"DoesNotExist\", \"Gt\", \"Lt\"");
}

TEST(SchedulingValidationTest, NodeAffinityNeedsATerm) {
  EXPECT_EQ(Affinity({{"nodeAffinity",
                       {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", json::array()}}}}}}),
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required "
            "value: must have at least one node selector term");
}

TEST(SchedulingValidationTest, PodAffinityTerms) {
  const json app = {{"matchLabels", {{"app", "x"}}}};
  EXPECT_EQ(Affinity(AntiPreferred(app, "")),
            std::string(kAntiTerm) + ".topologyKey: Required value: can not be empty; " + kAntiTerm +
                ".topologyKey: Invalid value: \"\": name part must be non-empty; " + kAntiTerm +
                ".topologyKey: Invalid value: \"\": name part must consist of "
                "alphanumeric characters, '-', '_' or '.', and must start and end "
                "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                "'123-abc', regex used for validation is "
                "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  EXPECT_EQ(Affinity(AntiPreferred({{"matchExpressions", {{{"key", "app"}, {"operator", "NotIn"}}}}},
                                   "kubernetes.io/hostname")),
            std::string(kAntiTerm) +
                ".labelSelector.matchExpressions[0].values: Required value: must be specified when `operator` is "
                "'In' or 'NotIn'");
  EXPECT_EQ(Affinity(AntiPreferred({{"matchExpressions", {{{"key", "app"}, {"operator", "In"}, {"values", {"a b"}}}}}},
                                   "kubernetes.io/hostname")),
            std::string(kAntiTerm) +
                ".labelSelector.matchExpressions[0].values[0]: Invalid value: \"a b\": a valid label must be an "
                "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  json with_namespace = AntiPreferred(app, "kubernetes.io/hostname");
  with_namespace["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]
                ["namespaces"] = {"team.a"};
  EXPECT_EQ(Affinity(with_namespace),
            std::string(kAntiTerm) + ".namespace: Invalid value: \"team.a\": must not contain dots");
}

TEST(SchedulingValidationTest, TopologySpreadConstraints) {
  const json zone = {{"maxSkew", 1}, {"topologyKey", "zone"}, {"whenUnsatisfiable", "DoNotSchedule"}};
  json zero = zone;
  zero["maxSkew"] = 0;
  EXPECT_EQ(Spread(json::array({zero})),
            "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero");
  json anyway = zone;
  anyway["whenUnsatisfiable"] = "ScheduleAnyway";
  anyway["minDomains"] = 2;
  EXPECT_EQ(Spread(json::array({anyway})),
            "spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: can only use minDomains if "
            "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway");
  EXPECT_EQ(Spread(json::array({zone, zone})),
            "spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: \"{zone, "
            "DoNotSchedule}\"");
  json empty_key = zone;
  empty_key["topologyKey"] = "";
  EXPECT_EQ(Spread(json::array({empty_key})),
            "spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty");
  EXPECT_EQ(Spread({{{"maxSkew", 1}, {"topologyKey", "zone"}}}),
            "spec.topologySpreadConstraints[0].whenUnsatisfiable: Required value");
}

}  // namespace
}  // namespace ms::api
