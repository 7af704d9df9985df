// The CRD in manifests/ carries the same constraints as the schema the
// webhook compiles (shared/api/schema/), and no defaults; every field has a
// description.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "shared/api/schema.h"
#include "shared/process/files.h"
#include "webhook/validate/yaml_reader.h"

namespace ms::api {
namespace {

using nlohmann::json;

bool HasKey(const json& j, const std::string& key) {
  if (j.is_object()) {
    if (j.contains(key)) return true;
    for (const auto& [k, v] : j.items())
      if (HasKey(v, key)) return true;
  } else if (j.is_array()) {
    for (const auto& v : j)
      if (HasKey(v, key)) return true;
  }
  return false;
}

TEST(CrdSchema, CrdCarriesExactlyTheWebhookSchemaAndNoDefaults) {
  // Read as kubectl reads it (YAML 1.1 scalars).
  auto docs = validate::ReadYaml(
      process::ReadFile(std::string(MS_SOURCE_DIR) + "/manifests/crd/modelservices.modelops.dev.yaml"));
  ASSERT_FALSE(docs.error) << *docs.error;
  ASSERT_EQ(docs.documents.size(), 1u);
  json crd = docs.documents[0].value;
  ASSERT_EQ(crd["kind"], "CustomResourceDefinition");
  ASSERT_EQ(crd["spec"]["versions"].size(), 1u);
  const json& version = crd["spec"]["versions"][0];
  EXPECT_EQ(version["name"], "v1");
  EXPECT_EQ(version["subresources"]["status"], json::object());
  // The scale subresource (kubectl scale, HorizontalPodAutoscaler): status.selector is in the schema, so the API
  // server keeps what the controller writes there.
  EXPECT_EQ(version["subresources"]["scale"], json::parse(R"({"specReplicasPath":".spec.replicas",
      "statusReplicasPath":".status.replicas","labelSelectorPath":".status.selector"})"));
  EXPECT_EQ(version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["selector"]["type"], "string");
  json schema = json::parse(kModelServiceSchemaJson);
  EXPECT_EQ(version["schema"]["openAPIV3Schema"], schema);
  EXPECT_FALSE(HasKey(crd, "default"));
  EXPECT_EQ(crd["spec"]["names"]["shortNames"], json::array({"ms"}));
  EXPECT_EQ(crd["spec"]["names"]["categories"], json::array({"all"}));  // kubectl get all (status.md)
  std::vector<std::string> columns;
  for (const auto& c : version["additionalPrinterColumns"]) columns.push_back(c["name"]);
  EXPECT_EQ(columns, (std::vector<std::string>{"Model", "Ready", "Phase", "Version", "GPU%", "URL", "Age"}));
  // READY is ready/desired, as a Deployment's: a string the controller writes.
  EXPECT_EQ(version["additionalPrinterColumns"][1]["jsonPath"], ".status.readySummary");
  EXPECT_EQ(version["additionalPrinterColumns"][1]["type"], "string");
}

// Every node of the schema that kubectl explain shows (the root, each
// property, the items of an array), by path, with its description ("" if none).
void CollectDescriptions(const json& node, const std::string& path, std::map<std::string, std::string>* out) {
  const auto d = node.find("description");
  (*out)[path] = d != node.end() && d->is_string() ? d->get<std::string>() : "";
  if (const auto props = node.find("properties"); props != node.end()) {
    for (const auto& [name, sub] : props->items()) CollectDescriptions(sub, path + "." + name, out);
  }
  if (const auto items = node.find("items"); items != node.end() && items->is_object()) {
    CollectDescriptions(*items, path + "[]", out);
  }
}

TEST(CrdSchema, EveryFieldHasADescription) {
  std::map<std::string, std::string> descriptions;
  CollectDescriptions(json::parse(kModelServiceSchemaJson), "modelservice", &descriptions);
  for (const char* path : {"modelservice.spec.strategy.rollingUpdate.maxSurge",
                           "modelservice.spec.autoscaling.maxReplicas", "modelservice.status.conditions[].reason"}) {
    EXPECT_TRUE(descriptions.contains(path)) << path;  // the walk reaches every level
  }
  for (const auto& [path, description] : descriptions) {
    // The API server describes metadata (ObjectMeta) and refuses a CRD that
    // says more than its type there.
    if (path == "modelservice.metadata") continue;
    EXPECT_NE(description.find_first_not_of(" \t\n"), std::string::npos) << path << " has no description";
  }
}

}  // namespace
}  // namespace ms::api
