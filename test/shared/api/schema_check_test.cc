// The compiled schema (schema_check.h) against its oracle, valijson over the
// same schema: the same violation paths on the samples (valid and invalid),
// the fuzz corpora's reviews, and thousands of mutations of them; its native
// pattern matchers against std::regex_search.
#include "shared/api/schema_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "shared/api/schema.h"
#include "shared/process/files.h"
#include "test/support/modelservice_catalogue.h"
#include "test/support/modelservice_schema.h"

namespace ms::api {
namespace {

using nlohmann::json;

std::set<std::string> OraclePaths(const json& doc) {
  std::set<std::string> out;
  for (const auto& e : test::ModelServiceSchema().Validate(doc)) out.insert(e.path);
  return out;
}

std::set<std::string> CompiledPaths(const json& doc) {
  auto paths = test::ModelServiceSchema().ViolationPaths(doc);
  EXPECT_TRUE(paths.has_value()) << "the ModelService schema must compile";
  return paths ? std::set<std::string>(paths->begin(), paths->end()) : std::set<std::string>{};
}

void ExpectSamePaths(const json& doc) { EXPECT_EQ(CompiledPaths(doc), OraclePaths(doc)) << doc.dump(); }

TEST(CompiledSchema, SamePathsAsValijsonOnTheCatalogue) {
  const auto docs = test::Catalogue();
  ASSERT_GE(docs.size(), 3020u);
  int invalid = 0;
  for (const auto& doc : docs) {
    ExpectSamePaths(doc);
    invalid += !OraclePaths(doc).empty();
  }
  EXPECT_GT(invalid, 0) << "the catalogue must break the schema somewhere";
}

// maxItems and maxProperties: a list or map over its bound is a violation
// at the list or map itself, its items still checked.
TEST(CompiledSchema, ListsAndMapsOverTheirBounds) {
  json doc = json::parse(R"({"apiVersion":"modelops.dev/v1","kind":"ModelService","metadata":{},
    "spec":{"model":"m"},"status":{"conditions":[]}})");
  for (int i = 0; i < 65; ++i) doc["spec"]["podLabels"]["k" + std::to_string(i)] = "v";
  doc["spec"]["args"] = std::vector<std::string>(257, "a");
  doc["spec"]["args"][3] = 7;
  for (int i = 0; i < 17; ++i) doc["status"]["conditions"].push_back({{"type", "Ready"}, {"status", "True"}});
  ExpectSamePaths(doc);
  EXPECT_EQ(CompiledPaths(doc),
            (std::set<std::string>{"spec.podLabels", "spec.args", "spec.args[3]", "status.conditions"}));
  doc["spec"]["podLabels"].erase("k0");
  doc["spec"]["args"] = std::vector<std::string>(256, "a");
  doc["status"]["conditions"].erase(0);
  EXPECT_EQ(CompiledPaths(doc), std::set<std::string>{});
}

TEST(CompiledSchema, SamePathsAsValijsonOnMutations) {
  const auto docs = test::Catalogue();
  const auto values = test::Values();
  std::mt19937 rng(27);
  int invalid = 0, total = 0;
  for (int round = 0; round < 12000; ++round) {
    const json doc = test::Mutated(docs, values, rng);
    const auto oracle = OraclePaths(doc);
    EXPECT_EQ(CompiledPaths(doc), oracle) << doc.dump();
    invalid += !oracle.empty();
    ++total;
  }
  EXPECT_GT(invalid, total / 4);
  EXPECT_LT(invalid, total);
}

// A skipped member of the root is neither walked nor required; the rest is.
TEST(CompiledSchema, SkipsTheRootMemberItIsTold) {
  const CompiledSchema schema(
      R"({"required":["a"],"properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"properties":{"a":{"type":"string"}}}}})");
  EXPECT_EQ(schema.ViolationPaths(json({{"a", 1}, {"b", 2}})), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(schema.ViolationPaths(json({{"a", 1}, {"b", 2}}), "a"), std::vector<std::string>{"b"});
  EXPECT_EQ(schema.ViolationPaths(json({{"b", "x"}}), "a"), std::vector<std::string>{});
  EXPECT_EQ(schema.ViolationPaths(json({{"b", "x"}})), std::vector<std::string>{""});
  EXPECT_EQ(schema.ViolationPaths(json({{"a", "x"}, {"c", {{"a", 1}}}}), "a"), std::vector<std::string>{"c.a"});
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
