// The controller's desired state comes from the typed spec and the same
// defaults as the webhook's (api/spec.h): whether or not the mutating webhook
// ran first, the controller builds the same objects.
#include "controller/modelservice/desired.h"

#include <gtest/gtest.h>

#include "controller/modelservice/status.h"
#include "shared/api/defaults.h"
#include "test/support/modelservice_corpus.h"
#include "test/support/objects.h"

namespace ms::modelservice {
namespace {

using nlohmann::json;

json Object(const json& spec) { return test::ModelService().WholeSpec(spec); }

TEST(Desired, SameObjectsWithOrWithoutTheWebhooksDefaults) {
  const Options opts;
  for (const json& obj : test::ModelServiceCorpus()) {
    const ResolvedSpec raw = ResolveSpec(obj, opts);
    const ResolvedSpec defaulted = ResolveSpec(api::DefaultedObject(obj), opts);
    EXPECT_EQ(DesiredDeployment(raw, raw.replicas), DesiredDeployment(defaulted, defaulted.replicas)) << obj.dump();
    EXPECT_EQ(DesiredService(raw), DesiredService(defaulted)) << obj.dump();
    EXPECT_EQ(raw.autoscaling.has_value(), defaulted.autoscaling.has_value()) << obj.dump();
  }
}

TEST(Desired, DefaultsAreTheWebhooks) {
  const ResolvedSpec s = ResolveSpec(Object({{"model", "m"}}), Options{});
  EXPECT_EQ(s.replicas, 1);
  EXPECT_EQ(s.port, 8080);
  EXPECT_EQ(s.gpus, 0);
  EXPECT_EQ(s.image, kDefaultImage);
  EXPECT_EQ(DesiredDeployment(s, 1)["spec"]["strategy"],
            json::parse(R"({"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":0}})"));
  // maxSurge 0 alone: maxUnavailable 1, as the webhook defaults it (0/0 would
  // be a Deployment the API server refuses).
  const ResolvedSpec surge0 =
      ResolveSpec(Object({{"model", "m"}, {"strategy", {{"rollingUpdate", {{"maxSurge", 0}}}}}}), Options{});
  EXPECT_EQ(DesiredDeployment(surge0, 1)["spec"]["strategy"]["rollingUpdate"],
            json::parse(R"({"maxSurge":0,"maxUnavailable":1})"));
  // Recreate has no rollingUpdate.
  const ResolvedSpec recreate = ResolveSpec(Object({{"model", "m"}, {"strategy", {{"type", "Recreate"}}}}), Options{});
  EXPECT_EQ(DesiredDeployment(recreate, 1)["spec"]["strategy"], json::parse(R"({"type":"Recreate"})"));
  // Autoscaling: replicas from minReplicas.
  const ResolvedSpec as = ResolveSpec(
      Object({{"model", "m"}, {"autoscaling", {{"minReplicas", 3}, {"maxReplicas", 9}, {"targetQueueLength", 4}}}}),
      Options{"registry.local/other:1"});
  EXPECT_EQ(as.replicas, 3);
  ASSERT_TRUE(as.autoscaling);
  EXPECT_EQ(as.autoscaling->min_replicas, 3);
  EXPECT_EQ(as.autoscaling->max_replicas, 9);
  EXPECT_EQ(as.autoscaling->target_queue_length, 4);
  EXPECT_EQ(as.image, "registry.local/other:1");
}

// The scale subresource's labelSelectorPath is .status.selector: the pods'
// selector as a string, as labels.SelectorFromSet(...).String() writes it.
TEST(Desired, StatusCarriesThePodSelectorForTheScaleSubresource) {
  const ResolvedSpec s = ResolveSpec(Object({{"model", "m"}}), Options{});
  EXPECT_EQ(SelectorString(s), "app.kubernetes.io/instance=bert,app.kubernetes.io/name=modelservice");
  StatusInput in;
  const json status = ComputeStatus(s, in, std::chrono::system_clock::from_time_t(1700000000));
  EXPECT_EQ(status["selector"], "app.kubernetes.io/instance=bert,app.kubernetes.io/name=modelservice");
  // The same labels the Deployment selects its pods with.
  std::string from_deployment;
  const json deployment = DesiredDeployment(s, 1);
  for (const auto& [k, v] : deployment["spec"]["selector"]["matchLabels"].items())
    from_deployment += (from_deployment.empty() ? "" : ",") + k + "=" + v.get<std::string>();
  EXPECT_EQ(status["selector"], from_deployment);
}

// The container's ports are the spec's (the port named http, the runtime's,
// spec.ports): a changed member, a hand-added port and a removed one are put
// back; the Service's port named http keeps its owned members.
TEST(Desired, TheHttpPortsAreRepaired) {
  const ResolvedSpec s = ResolveSpec(Object({{"model", "m"}, {"port", 9000}}), Options{});
  json d = DesiredDeployment(s, 1);
  json& ports = d["spec"]["template"]["spec"]["containers"][0]["ports"];
  const json want = ports;
  EXPECT_EQ(want, json::parse(R"([{"name": "http", "containerPort": 9000, "protocol": "TCP"}])"));
  ports[0]["containerPort"] = 80;
  ports[0]["hostPort"] = 9000;
  ports.push_back({{"name", "metrics"}, {"containerPort", 9090}});
  EXPECT_EQ(RepairDeployment(s, 1, d), Drift{"ports"});
  EXPECT_EQ(ports, want);
  ports.erase(0);
  EXPECT_EQ(RepairDeployment(s, 1, d), Drift{"ports"});
  EXPECT_EQ(ports, want);

  json svc = DesiredService(s);
  svc["spec"]["ports"][0]["port"] = 80;
  svc["spec"]["ports"][0]["targetPort"] = 9000;
  EXPECT_EQ(RepairService(s, svc), Drift{"spec.ports"});
  EXPECT_EQ(svc["spec"]["ports"],
            json::parse(R"([{"name": "http", "port": 9000, "targetPort": "http", "protocol": "TCP"}])"));
  svc["spec"]["ports"] = json::array();
  EXPECT_EQ(RepairService(s, svc), Drift{"spec.ports"});
  EXPECT_EQ(svc["spec"]["ports"],
            json::parse(R"([{"name": "http", "port": 9000, "targetPort": "http", "protocol": "TCP"}])"));
  EXPECT_EQ(RepairService(s, svc), Drift{});
}

// The spec hash names the pod template's version (a Deployment's pods roll
// when it changes): a controller upgrade that wrote it differently would
// roll every model server of the cluster. Pinned over the whole corpus.
TEST(Desired, TheSpecHashOfEverySpecIsTheSameAsInEarlierReleases) {
  EXPECT_EQ(ResolveSpec(Object({{"model", "m"}}), Options{}).spec_hash, "6733842330c81221");
  std::string all;
  for (const json& obj : test::ModelServiceCorpus()) all += ResolveSpec(obj, Options{}).spec_hash;
  uint64_t h = 14695981039346656037ULL;  // FNV-1a 64 of the 3,000 hashes
  for (const unsigned char c : all) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  EXPECT_EQ(h, 0x91abc43460803275ULL) << std::hex << h;
}

}  // namespace
}  // namespace ms::modelservice
