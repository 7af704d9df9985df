// The compiled schema (schema_check.h) against its oracle, valijson over the
// same schema: the same violation paths on the samples (valid and invalid),
// the fuzz corpora's reviews, and thousands of mutations of them; its native
// pattern matchers against std::regex_search.
#include "api/schema_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "api/schema.h"
#include "base/files.h"
#include "test/support/modelservice_corpus.h"
#include "webhook/validate/yaml_reader.h"

namespace ms::api {
namespace {

using nlohmann::json;

const SchemaValidator& Oracle() {
  static const SchemaValidator schema;  // compiled once for the suite
  return schema;
}

std::set<std::string> OraclePaths(const json& doc) {
  std::set<std::string> out;
  for (const auto& e : Oracle().Validate(doc)) out.insert(e.path);
  return out;
}

std::set<std::string> CompiledPaths(const json& doc) {
  auto paths = Oracle().ViolationPaths(doc);
  EXPECT_TRUE(paths.has_value()) << "the ModelService schema must compile";
  return paths ? std::set<std::string>(paths->begin(), paths->end()) : std::set<std::string>{};
}

// Every ModelService in the samples (manifests/samples, valid and invalid),
// every object and old object of the fuzz corpora's reviews, and the
// property tests' generated objects.
std::vector<json> Catalogue() {
  namespace fs = std::filesystem;
  std::vector<json> out = test::ModelServiceCorpus();
  const fs::path root(MS_SOURCE_DIR);
  for (const char* dir : {"manifests/samples", "manifests/samples/invalid"})
    for (const auto& entry : fs::directory_iterator(root / dir))
      if (entry.path().extension() == ".yaml")
        for (auto& doc : validate::ReadYaml(ReadFile(entry.path().string())).documents)
          if (doc.value.is_object()) out.push_back(std::move(doc.value));
  for (const char* dir : {"test/fuzz/corpus/review", "test/fuzz/corpus/review_parser", "bench/fixtures"})
    for (const auto& entry : fs::directory_iterator(root / dir)) {
      const json review = json::parse(ReadFile(entry.path().string()), nullptr, false);
      if (!review.is_object() || !review.contains("request")) continue;
      for (const char* key : {"object", "oldObject"})
        if (auto it = review["request"].find(key); it != review["request"].end() && it->is_object()) out.push_back(*it);
    }
  return out;
}

// Values that break or meet the schema's constraints in every way it has.
std::vector<json> Values() {
  return {json(nullptr),
          json(true),
          json(false),
          json(0),
          json(1),
          json(-1),
          json(16),
          json(17),
          json(29),
          json(30),
          json(100),
          json(101),
          json(3600),
          json(3601),
          json(65535),
          json(65536),
          json(2.5),
          json(1.0),
          json(-0.5),
          json(18446744073709551615ull),
          json(-9223372036854775807ll - 1),
          json::parse("1e2"),
          json(""),
          json("x"),
          json("a b"),
          json("a\tb"),
          json(std::string("a\0b", 3)),
          json("\u00e9t\u00e9"),
          json("25%"),
          json("0%"),
          json("100%"),
          json("101%"),
          json("05%"),
          json("5"),
          json("1Gi"),
          json("500m"),
          json("1e3"),
          json("1E"),
          json("1e"),
          json(".5"),
          json("+1.5Ki"),
          json("-"),
          json(std::string(63, 'v')),
          json(std::string(64, 'v')),
          json(std::string(253, 'a')),
          json(std::string(254, 'a')),
          json::object(),
          json::array(),
          json({{"name", "n"}}),
          json({{"name", 5}}),
          json::array({"a", 1}),
          json::array({json::object()}),
          json({{"name", "s"}, {"key", "k"}}),
          json({{"123", "x"}}),
          json({{"a", 5}}),
          json("Recreate"),
          json("RollingUpdate"),
          json("Controller"),
          json("HPA"),
          json("hpa"),
          json("Manual"),
          json("Automatic"),
          json("Equal"),
          json("NoSchedule"),
          json("Ready"),
          json("True")};
}

// Every JSON pointer to a value inside `doc` (the root included).
void Pointers(const json& doc, const json::json_pointer& at, std::vector<json::json_pointer>& out) {
  out.push_back(at);
  if (doc.is_object())
    for (const auto& [k, v] : doc.items()) Pointers(v, at / k, out);
  if (doc.is_array())
    for (size_t i = 0; i < doc.size(); ++i) Pointers(doc[i], at / i, out);
}

// The schema's property names, so mutations also add known fields.
const std::vector<std::string> kNames = {"spec",
                                         "status",
                                         "metadata",
                                         "model",
                                         "version",
                                         "image",
                                         "replicas",
                                         "port",
                                         "gpus",
                                         "strategy",
                                         "type",
                                         "rollingUpdate",
                                         "maxSurge",
                                         "maxUnavailable",
                                         "autoscaling",
                                         "mode",
                                         "minReplicas",
                                         "maxReplicas",
                                         "targetQueueLength",
                                         "rollout",
                                         "timeoutSeconds",
                                         "rollback",
                                         "resources",
                                         "requests",
                                         "limits",
                                         "cpu",
                                         "env",
                                         "name",
                                         "value",
                                         "valueFrom",
                                         "secretKeyRef",
                                         "configMapKeyRef",
                                         "key",
                                         "optional",
                                         "args",
                                         "nodeSelector",
                                         "tolerations",
                                         "operator",
                                         "effect",
                                         "tolerationSeconds",
                                         "imagePullSecrets",
                                         "serviceAccountName",
                                         "podAnnotations",
                                         "podLabels",
                                         "phase",
                                         "conditions",
                                         "reason",
                                         "observedGeneration",
                                         "unknownField",
                                         "7"};

void ExpectSamePaths(const json& doc) { EXPECT_EQ(CompiledPaths(doc), OraclePaths(doc)) << doc.dump(); }

TEST(CompiledSchema, SamePathsAsValijsonOnTheCatalogue) {
  const auto docs = Catalogue();
  ASSERT_GE(docs.size(), 3020u);
  int invalid = 0;
  for (const auto& doc : docs) {
    ExpectSamePaths(doc);
    invalid += !OraclePaths(doc).empty();
  }
  EXPECT_GT(invalid, 0) << "the catalogue must break the schema somewhere";
}

TEST(CompiledSchema, SamePathsAsValijsonOnMutations) {
  const auto docs = Catalogue();
  const auto values = Values();
  std::mt19937 rng(27);
  int invalid = 0, total = 0;
  for (int round = 0; round < 12000; ++round) {
    json doc = docs[rng() % docs.size()];
    for (int m = 0, n = 1 + rng() % 3; m < n; ++m) {
      std::vector<json::json_pointer> at;
      Pointers(doc, json::json_pointer(), at);
      const auto& p = at[rng() % at.size()];
      json& target = doc[p];
      const json& v = values[rng() % values.size()];
      if (target.is_object() && rng() % 2)
        target[kNames[rng() % kNames.size()]] = v;
      else if (target.is_array() && rng() % 2)
        target.push_back(v);
      else
        target = v;
    }
    const auto oracle = OraclePaths(doc);
    EXPECT_EQ(CompiledPaths(doc), oracle) << doc.dump();
    invalid += !oracle.empty();
    ++total;
  }
  EXPECT_GT(invalid, total / 4);
  EXPECT_LT(invalid, total);
}

TEST(CompiledSchema, SchemaItCannotCompileIsNotSupported) {
  EXPECT_FALSE(CompiledSchema(R"({"type":"object","format":"date-time"})").supported());
  EXPECT_FALSE(CompiledSchema(R"({"minimum":1,"exclusiveMinimum":true})").supported());
  EXPECT_FALSE(CompiledSchema("not json").supported());
  EXPECT_TRUE(CompiledSchema(R"({"type":"object","additionalProperties":false})").supported());
  EXPECT_EQ(CompiledSchema(R"({"properties":{"a":{}},"additionalProperties":false})").ViolationPaths(json({{"b", 1}})),
            std::vector<std::string>{""});
}

TEST(CompiledSchema, UnknownPatternsGoThroughStdRegex) {
  const CompiledSchema schema(R"({"properties":{"a":{"pattern":"^x+$"}}})");
  ASSERT_TRUE(schema.supported());
  EXPECT_TRUE(schema.ViolationPaths(json({{"a", "xx"}})).empty());
  EXPECT_EQ(schema.ViolationPaths(json({{"a", "xy"}})), std::vector<std::string>{"a"});
}

// Every string of up to 3 characters over an alphabet that exercises each
// pattern, and random longer ones, matched natively and by std::regex.
TEST(CompiledSchema, NativePatternsMatchAsStdRegex) {
  const std::vector<std::string> patterns = {
      R"(^[^\s\x00-\x1F\x7F]+$)", R"(^(100|[1-9]?[0-9])%$)",
      R"(^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$)"};
  const std::string alphabet = std::string("019.+-eEKMimn%a \t\x7f\x1f\xc3\xa9", 22) + std::string(1, '\0');
  std::vector<std::string> inputs = {""};
  for (size_t len = 1, begin = 0; len <= 3; ++len) {
    const size_t end = inputs.size();
    for (size_t i = begin; i < end; ++i)
      for (char c : alphabet) inputs.push_back(inputs[i] + c);
    begin = end;
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    for (int n = rng() % 12; n > 0; --n) s += alphabet[rng() % alphabet.size()];
    inputs.push_back(s);
  }
  for (const auto& pattern : patterns) {
    const PatternMatcher native = NativePattern(pattern);
    ASSERT_NE(native, nullptr) << pattern;
    const std::regex re(pattern);
    int matched = 0;
    for (const auto& s : inputs) {
      const bool want = std::regex_search(s, re);
      ASSERT_EQ(native(s), want) << pattern << " on \"" << s << "\"";
      matched += want;
    }
    EXPECT_GT(matched, 10) << pattern;
  }
}

}  // namespace
}  // namespace ms::api
