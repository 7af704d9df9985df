// The CRD in manifests/ carries the same constraints as the schema the
// webhook compiles (api/schema/), and no defaults.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "api/schema.h"

namespace ms {
namespace {

using nlohmann::json;

json ToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = ToJson(kv.second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& e : n) a.push_back(ToJson(e));
      return a;
    }
    case YAML::NodeType::Scalar: {
      const std::string s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted: a string
      if (s == "true") return true;
      if (s == "false") return false;
      try {
        size_t pos = 0;
        long long v = std::stoll(s, &pos);
        if (pos == s.size()) return v;
      } catch (...) {
      }
      return s;
    }
    default:
      return nullptr;
  }
}

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
  auto docs = YAML::LoadAllFromFile(std::string(MS_SOURCE_DIR) + "/manifests/crd/modelservices.modelops.dev.yaml");
  ASSERT_EQ(docs.size(), 1u);
  json crd = ToJson(docs[0]);
  ASSERT_EQ(crd["kind"], "CustomResourceDefinition");
  ASSERT_EQ(crd["spec"]["versions"].size(), 1u);
  const json& version = crd["spec"]["versions"][0];
  EXPECT_EQ(version["name"], "v1");
  EXPECT_EQ(version["subresources"]["status"], json::object());
  json schema = json::parse(kModelServiceSchemaJson);
  EXPECT_EQ(version["schema"]["openAPIV3Schema"], schema);
  EXPECT_FALSE(HasKey(crd, "default"));
  EXPECT_EQ(crd["spec"]["names"]["shortNames"], json::array({"ms"}));
  std::vector<std::string> columns;
  for (const auto& c : version["additionalPrinterColumns"]) columns.push_back(c["name"]);
  EXPECT_EQ(columns, (std::vector<std::string>{"Model", "Replicas", "Ready", "Phase", "Age"}));
}

}  // namespace
}  // namespace ms
