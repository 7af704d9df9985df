// The typed read takes an object's members as the text has them (the
// webhook reads the review's bytes); the controller and `validate` give it
// nlohmann's tree dumped (members in key order, each key once). Both must
// answer alike: the typed spec, every error and warning in the same order,
// the defaults patch, the Scale rule. Here each text is written with every
// object's members in reverse key order and with each object's first key
// repeated before it with a value of the wrong kind (which the last value
// must replace, errors included), on the catalogue of ModelServices and on
// thousands of mutations of it.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "shared/api/defaults.h"
#include "shared/api/spec.h"
#include "shared/api/validation.h"
#include "test/support/modelservice_catalogue.h"

namespace ms::api {
namespace {

using nlohmann::json;

std::vector<std::string> Strings(const std::vector<FieldError>& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.ToString());
  return out;
}

// `v` as JSON text, every object's members in reverse key order, its first
// written key preceded by the same key holding [{"decoy":"x"}].
std::string Scrambled(const json& v) {
  if (v.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + Scrambled(v[i]);
    return out + "]";
  }
  if (!v.is_object()) return v.dump();
  std::string out = "{";
  for (auto it = v.rbegin(); it != v.rend(); ++it) {
    if (out.size() == 1) out += json(it.key()).dump() + R"(:[{"decoy":"x"}],)";
    out += (out.size() > 1 && out.back() != ',' ? "," : "") + json(it.key()).dump() + ":" + Scrambled(it.value());
  }
  return out + "}";
}

void ExpectSameAnswers(const json& doc) {
  const std::string text = Scrambled(doc);
  SCOPED_TRACE(text);
  const json tree = json::parse(text);
  ASSERT_EQ(tree, doc);  // the decoys are overwritten: the same value
  const text::JsonText bytes{text};

  const ParsedModelService pt = ParseModelService(bytes), pn = ParseModelService(tree);
  EXPECT_EQ(Strings(pt.errors), Strings(pn.errors));
  EXPECT_EQ(pt.warnings, pn.warnings);
  EXPECT_EQ(ToJsonValue(pt.spec), ToJsonValue(pn.spec));

  const ValidationOutcome vt = ValidateModelService(bytes), vn = ValidateModelService(tree);
  EXPECT_EQ(Strings(vt.errors), Strings(vn.errors));
  EXPECT_EQ(vt.warnings, vn.warnings);

  const json patch = DefaultsPatch(tree);
  EXPECT_EQ(DefaultsPatchText(bytes), patch.empty() ? "" : patch.dump());
  EXPECT_EQ(Strings(ValidateScale(bytes).errors), Strings(ValidateScale(tree).errors));
}

TEST(ReadOrder, SameAnswersOnTheCatalogue) {
  const auto docs = test::Catalogue();
  ASSERT_GE(docs.size(), 3020u);
  for (const auto& doc : docs) {
    ExpectSameAnswers(doc);
    if (HasFailure()) return;
  }
}

TEST(ReadOrder, SameAnswersOnMutations) {
  const auto docs = test::Catalogue();
  const auto values = test::Values();
  std::mt19937 rng(2712);
  int invalid = 0;
  constexpr int kRounds = 4000;
  for (int round = 0; round < kRounds; ++round) {
    const json doc = test::Mutated(docs, values, rng);
    ExpectSameAnswers(doc);
    if (HasFailure()) return;
    invalid += !ValidateModelService(doc).ok();
  }
  EXPECT_GT(invalid, kRounds / 4) << "the mutations must break the rules often";
  EXPECT_LT(invalid, kRounds);
}

// A repeated key: the last value wins, its errors replacing the earlier
// one's; unknown fields are warned once each, in key order.
TEST(ReadOrder, TheLastOfARepeatedKeyWins) {
  const std::string text =
      R"({"apiVersion":"modelops.dev/v1","kind":"ModelService","metadata":{"name":"x"},)"
      R"("spec":{"replicas":500,"model":"a","zz":1,"replicas":2,"model":"b","aa":2,"zz":3,"model":"c"}})";
  const ParsedModelService p = ParseModelService(text::JsonText{text});
  EXPECT_TRUE(p.errors.empty()) << JoinErrors(p.errors);  // replicas 500 was replaced by 2
  EXPECT_EQ(p.spec.model, "c");
  EXPECT_EQ(p.spec.replicas, 2);
  EXPECT_EQ(p.warnings, (std::vector<std::string>{"unknown field \"spec.aa\"", "unknown field \"spec.zz\""}));
}

// Errors come in the definition's order of the fields (model, replicas,
// port, ...), whatever the order of the text.
TEST(ReadOrder, ErrorsInTheDefinitionsOrder) {
  const std::string text =
      R"({"spec":{"port":65536,"replicas":0,"strategy":{"rollingUpdate":{"maxSurge":"x"},"type":"Nope"}}})";
  EXPECT_EQ(JoinErrors(ParseModelService(text::JsonText{text}).errors),
            "spec.model: Required value; spec.replicas: Invalid value: 0: must be between 1 and 100; "
            "spec.port: Invalid value: 65536: must be between 1 and 65535; "
            "spec.strategy.type: Unsupported value: \"Nope\": supported values: \"RollingUpdate\", \"Recreate\"; "
            "spec.strategy.rollingUpdate.maxSurge: Invalid value: \"x\": must be an integer >= 0 or a percentage "
            "between 0% and 100%");
}

// A list or map over its bound is counted, not read: one "Too many" error,
// none of its items'.
TEST(ReadOrder, AListOverItsBoundIsCountedNotRead) {
  std::string args;
  for (int i = 0; i < 100000; ++i) args += std::string(i ? "," : "") + "7";
  const std::string text = R"({"spec":{"model":"m","args":[)" + args + "]}}";
  const ParsedModelService p = ParseModelService(text::JsonText{text});
  ASSERT_EQ(p.errors.size(), 1u) << JoinErrors(p.errors);
  EXPECT_EQ(p.errors[0].ToString().substr(0, 29), "spec.args: Too many: 100000: ");
  EXPECT_FALSE(p.spec.args.has_value());
}

}  // namespace
}  // namespace ms::api
