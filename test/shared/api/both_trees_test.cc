// The API's readers take either tree (shared/text/json_ref.h): nlohmann::json, as
// the controller and the offline validator hold objects, or a RapidJSON
// value, as the webhook parses a review. Each reader must give the same
// answer on both trees of the same text: the typed spec, every error and
// warning, the schema's violation paths, the defaults patch. Checked on the
// catalogue of ModelServices (samples, fuzz corpora, property objects) and
// on thousands of mutations of them; and JsonRef's own reading of numbers
// and duplicate keys against nlohmann's parser.
#include <rapidjson/document.h>

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "shared/api/defaults.h"
#include "shared/api/spec.h"
#include "shared/api/validation.h"
#include "shared/text/json_ref.h"
#include "test/support/modelservice_catalogue.h"
#include "test/support/modelservice_schema.h"

namespace ms::api {
namespace {

using nlohmann::json;

// `text` parsed by RapidJSON (the webhook's parser).
struct Rapid {
  explicit Rapid(const std::string& text) {
    doc.Parse(text.c_str(), text.size());
    EXPECT_FALSE(doc.HasParseError()) << text;
  }
  rapidjson::Document doc;
};

std::vector<std::string> Strings(const std::vector<FieldError>& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.ToString());
  return out;
}

// `v` as JSON text with every object's members in reverse key order (nlohmann
// writes them sorted): RapidJSON keeps the text's order, so JsonRef must
// put them back in key order.
std::string ReversedDump(const json& v) {
  if (v.is_array()) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + ReversedDump(v[i]);
    return out + "]";
  }
  if (!v.is_object()) return v.dump();
  std::string out = "{";
  for (auto it = v.rbegin(); it != v.rend(); ++it)
    out += (out.size() > 1 ? "," : "") + json(it.key()).dump() + ":" + ReversedDump(it.value());
  return out + "}";
}

void ExpectSameReaders(const json& n, text::JsonRef rv, const std::string& text);

// Every reader on both trees of `doc`'s text.
void ExpectSameOnBothTrees(const json& doc) {
  const std::string text = ReversedDump(doc);
  const json n = json::parse(text);
  const Rapid copy(text);
  ExpectSameReaders(n, copy.doc, text);
}

void ExpectSameReaders(const json& n, text::JsonRef rv, const std::string& text) {
  const ParsedModelService pn = ParseModelService(n), pr = ParseModelService(rv);
  EXPECT_EQ(Strings(pr.errors), Strings(pn.errors)) << text;
  EXPECT_EQ(pr.warnings, pn.warnings) << text;
  EXPECT_EQ(ToJsonValue(pr.spec), ToJsonValue(pn.spec)) << text;

  const ValidationOutcome vn = ValidateModelService(n), vr = ValidateModelService(rv);
  EXPECT_EQ(Strings(vr.errors), Strings(vn.errors)) << text;
  EXPECT_EQ(vr.warnings, vn.warnings) << text;

  const json patch = DefaultsPatch(n);
  EXPECT_EQ(DefaultsPatch(rv), patch) << text;
  // The text the webhook sends is that patch, written without a tree.
  const std::string patch_text = patch.empty() ? "" : patch.dump();
  EXPECT_EQ(DefaultsPatchText(rv), patch_text) << text;
  EXPECT_EQ(DefaultsPatchText(n), patch_text) << text;
  EXPECT_EQ(Strings(ValidateScale(rv).errors), Strings(ValidateScale(n).errors)) << text;
}

TEST(BothTrees, SameAnswersOnTheCatalogue) {
  const auto docs = test::Catalogue();
  ASSERT_GE(docs.size(), 3020u);
  for (const auto& doc : docs) ExpectSameOnBothTrees(doc);
}

TEST(BothTrees, SameAnswersOnMutations) {
  const auto docs = test::Catalogue();
  const auto values = test::Values();
  std::mt19937 rng(2712);
  int invalid = 0;
  constexpr int kRounds = 4000;
  for (int round = 0; round < kRounds; ++round) {
    const json doc = test::Mutated(docs, values, rng);
    ExpectSameOnBothTrees(doc);
    invalid += !ValidateModelService(doc).ok();
  }
  EXPECT_GT(invalid, kRounds / 4) << "the mutations must break the rules often";
  EXPECT_LT(invalid, kRounds);
}

// A repeated key: nlohmann's parser keeps the last value; so does JsonRef
// over RapidJSON (which keeps both members), in lookups, in member order,
// and so in every reader.
TEST(BothTrees, TheLastOfDuplicateKeysWins) {
  const std::string text = R"({"apiVersion":"modelops.dev/v1","kind":"ModelService","metadata":{"name":"x"},)"
                           R"("spec":{"replicas":500,"model":"a","zz":1,"replicas":2,"model":"b","aa":2,"model":"c"}})";
  const json n = json::parse(text);
  const Rapid r(text);
  const text::JsonRef spec = *text::JsonRef(r.doc).find("spec");
  EXPECT_EQ(spec.find("model")->str(), "c");
  EXPECT_EQ(spec.size(), 4u);
  std::vector<std::string> keys;
  spec.for_each_member([&](std::string_view k, text::JsonRef) { keys.emplace_back(k); });
  EXPECT_EQ(keys, (std::vector<std::string>{"aa", "model", "replicas", "zz"}));
  const ParsedModelService pr = ParseModelService(r.doc);
  EXPECT_TRUE(pr.errors.empty()) << JoinErrors(pr.errors);  // replicas 500 was overwritten by 2
  EXPECT_EQ(pr.warnings, (std::vector<std::string>{"unknown field \"spec.aa\"", "unknown field \"spec.zz\""}));
  ExpectSameOnBothTrees(n);
  EXPECT_TRUE(text::JsonEqual(r.doc, n));
}

// Numbers are typed as nlohmann types them: an integer that fits 64 bits
// is an integer (unsigned when not negative), anything else a double.
TEST(BothTrees, NumbersTypedAsNlohmannTypesThem) {
  for (const std::string text : {"0",
                                 "-0",
                                 "1",
                                 "-1",
                                 "9223372036854775807",
                                 "9223372036854775808",
                                 "-9223372036854775808",
                                 "18446744073709551615",
                                 "18446744073709551616",
                                 "-9223372036854775809",
                                 "1.0",
                                 "1e2",
                                 "-0.0",
                                 "2.5",
                                 "1E400",
                                 "true",
                                 "null",
                                 "\"s\"",
                                 "[]",
                                 "{}"}) {
    if (text == "1E400") continue;  // out of a double's range: refused before any reader (review.h)
    const json n = json::parse(text);
    const Rapid r(text);
    const text::JsonRef a = n, b = r.doc;
    EXPECT_EQ(b.is_number(), a.is_number()) << text;
    EXPECT_EQ(b.is_number_integer(), a.is_number_integer()) << text;
    // "-0": nlohmann's signed 0, RapidJSON's 0 (unsigned too); the same
    // value to every reader.
    if (text != "-0") {
      EXPECT_EQ(b.is_number_unsigned(), a.is_number_unsigned()) << text;
    }
    EXPECT_EQ(b.is_number_float(), a.is_number_float()) << text;
    EXPECT_EQ(b.dump(), a.dump()) << text;
    EXPECT_EQ(b.size(), a.size()) << text;
    if (a.is_number()) {
      EXPECT_EQ(b.int64(), a.int64()) << text;
      EXPECT_EQ(b.uint64(), a.uint64()) << text;
      EXPECT_EQ(b.number(), a.number()) << text;
    }
    EXPECT_TRUE(text::JsonEqual(a, b)) << text;
  }
}

// A double read as an integer is clamped to the integer's range (a bare
// cast would be undefined behaviour), the same on both trees.
TEST(BothTrees, DoublesOutOfAnIntegersRangeAreClamped) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  constexpr uint64_t kUMax = std::numeric_limits<uint64_t>::max();
  struct Case {
    std::string text;
    int64_t i;
    uint64_t u;
  };
  for (const Case& c : {Case{"18446744073709551616", kMax, kUMax}, Case{"1e30", kMax, kUMax},
                        Case{"-9223372036854775809", kMin, 0}, Case{"-1e30", kMin, 0}, Case{"-2.5", -2, 0},
                        Case{"-0.5", 0, 0}, Case{"2.5", 2, 2}, Case{"1e19", kMax, 10000000000000000000u}}) {
    const json n = json::parse(c.text);
    const Rapid r(c.text);
    const text::JsonRef a = n, b = r.doc;
    ASSERT_TRUE(a.is_number_float() && b.is_number_float()) << c.text;
    EXPECT_EQ(a.int64(), c.i) << c.text;
    EXPECT_EQ(b.int64(), c.i) << c.text;
    EXPECT_EQ(a.uint64(), c.u) << c.text;
    EXPECT_EQ(b.uint64(), c.u) << c.text;
  }
}

// JsonEqual (validation ratcheting compares an update's spec with the old
// one) as nlohmann's operator==.
TEST(BothTrees, EqualityAsNlohmannSeesIt) {
  const std::vector<std::string> texts = {R"({"a":1,"b":[1,2]})",
                                          R"({"b":[1,2],"a":1})",
                                          R"({"a":1.0,"b":[1,2]})",
                                          R"({"a":1,"b":[2,1]})",
                                          R"({"a":1})",
                                          R"({"a":1,"a":2})",
                                          R"({"a":2})",
                                          R"({"a":-1})",
                                          R"({"a":"1"})",
                                          R"({"a":null})",
                                          R"({"a":true})",
                                          R"([])",
                                          R"({})",
                                          R"(null)",
                                          R"([{}])",
                                          R"([null])"};
  for (const auto& x : texts)
    for (const auto& y : texts) {
      const json nx = json::parse(x), ny = json::parse(y);
      const Rapid rx(x), ry(y);
      EXPECT_EQ(text::JsonEqual(rx.doc, ry.doc), nx == ny) << x << " vs " << y;
      EXPECT_EQ(text::JsonEqual(rx.doc, ny), nx == ny) << x << " vs " << y;
    }
}

}  // namespace
}  // namespace ms::api
