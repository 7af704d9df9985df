// The review parser against nlohmann::json::parse, its reference: what it
// reads equals nlohmann's tree read the same way (ParsedReview::View) wherever
// it accepts a body, and it refuses exactly what nlohmann refuses.
#include <gtest/gtest.h>

#include <fstream>
#include <initializer_list>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "shared/process/files.h"
#include "shared/text/utf8.h"
#include "webhook/admission/review.h"
#include "webhook/admission/review_parser.h"

namespace ms::admission {
namespace {

using nlohmann::json;

std::vector<std::string> Fixtures() {
  std::vector<std::string> out;
  for (const char* f : {"validate-valid.json", "validate-invalid.json", "mutate-defaults.json"})
    out.push_back(process::ReadFile(std::string(MS_SOURCE_DIR) + "/bench/fixtures/" + f));
  return out;
}

// A string member's text, else "" (AdmissionRequest's rule).
std::string Text(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// What ParsedReview::View() must be, from nlohmann's tree.
json Reference(const std::string& body) {
  const json review = json::parse(body);
  if (!review.is_object()) return nullptr;
  json j = json::object();
  for (const char* k : {"apiVersion", "kind"})
    if (review.contains(k) && review[k].is_string()) j[k] = review[k];
  if (!review.contains("request") || !review["request"].is_object()) return j;
  const json& r = review["request"];
  json& out = j["request"] = json::object();
  for (const char* k : {"uid", "subResource", "name", "namespace", "operation"}) out[k] = Text(r, k);
  if (r.contains("kind") && r["kind"].is_object())
    out["kind"] = {{"group", Text(r["kind"], "group")}, {"kind", Text(r["kind"], "kind")}};
  if (r.contains("resource") && r["resource"].is_object())
    out["resource"] = {{"group", Text(r["resource"], "group")}, {"resource", Text(r["resource"], "resource")}};
  for (const char* name : {"object", "oldObject"}) {
    if (!r.contains(name)) continue;
    const json& o = r[name];
    json& v = out[name] = {{"json", o}, {"isObject", o.is_object()}};
    if (!o.is_object()) continue;
    for (const char* m : {"apiVersion", "kind", "spec"})
      if (o.contains(m)) v[m] = o[m];
    if (o.contains("metadata") && o["metadata"].is_object())
      for (const char* m : {"name", "generateName"})
        if (o["metadata"].contains(m)) v[m] = o["metadata"][m];
  }
  return j;
}

// Both the values and the number types must agree: validation treats an
// unsigned, a signed and a floating-point number differently.
// "-0" is nlohmann's signed 0 and RapidJSON's unsigned one: the same value
// to every reader (shared/text/json_ref.h).
void ExpectSameTree(const json& a, const json& b, const std::string& where) {
  if (a.is_number_integer() && b.is_number_integer() && a == 0 && b == 0) return;
  ASSERT_EQ(a.type(), b.type()) << where << ": " << a.dump() << " vs " << b.dump();
  if (a.is_object()) {
    ASSERT_EQ(a.size(), b.size()) << where;
    for (auto it = a.begin(); it != a.end(); ++it) {
      ASSERT_TRUE(b.contains(it.key())) << where << "/" << it.key();
      ExpectSameTree(it.value(), b.at(it.key()), where + "/" + it.key());
    }
  } else if (a.is_array()) {
    ASSERT_EQ(a.size(), b.size()) << where;
    for (size_t i = 0; i < a.size(); ++i) ExpectSameTree(a[i], b[i], where + "/" + std::to_string(i));
  } else {
    ASSERT_EQ(a, b) << where;
  }
}

// The property, for one body.
void CheckAgainstNlohmann(const std::string& body) {
  bool reference_ok = true;
  json reference;
  try {
    reference = Reference(body);
  } catch (const json::exception&) {
    reference_ok = false;
  }
  ParsedReview fast = ParseReview(body, 1000);
  if (fast.status == ParsedReview::kOk) {
    ASSERT_TRUE(reference_ok) << "accepted a body nlohmann refuses: " << body;
    ExpectSameTree(fast.View(), reference, "");
  }
  // And the other way: what nlohmann takes (a NUL byte aside, which the
  // webhook refuses before either parser) the parser takes too.
  if (reference_ok && body.find('\0') == std::string::npos) {
    ASSERT_EQ(fast.status, ParsedReview::kOk) << "refused a body nlohmann takes: " << body;
  }
}

TEST(ReviewParser, FixturesReadAsNlohmannsTreeHoldsThem) {
  for (const auto& body : Fixtures()) {
    ParsedReview fast = ParseReview(body, kMaxNestingDepth);
    ASSERT_EQ(fast.status, ParsedReview::kOk);
    ExpectSameTree(fast.View(), Reference(body), "");
    EXPECT_FALSE(fast.View()["request"].contains("userInfo"));
    EXPECT_FALSE(fast.View()["request"].contains("requestKind"));
    EXPECT_EQ(fast.View()["request"]["object"]["name"], "bert-qa");
    EXPECT_EQ(fast.View()["request"]["object"]["json"], json::parse(body)["request"]["object"]);
    EXPECT_EQ(fast.View()["request"]["uid"], json::parse(body)["request"]["uid"]);
  }
}

TEST(ReviewParser, ReadsOnlyTheNamedMembersAtTheirPlaces) {
  const std::string body = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
    "userInfo":{"a":1},"options":[1,2],
    "request":{"uid":"u","oldObject":{"metadata":{"name":"n"},"spec":{"replicas":[[[1]]]},"status":{}},"userInfo":"x","options":null,
      "dryRun":false,"operation":"CREATE","kind":{"group":"g","userInfo":1},"subResource":"scale",
      "object":{"metadata":{"name":"n","generateName":"g-","managedFields":[{"f":{"g":{}}}],"labels":{"name":"kept"}},
                "spec":{"managedFields":1,"oldObject":2},"status":{"phase":"Ready"},"extra":1},
      "extra":{"oldObject":3}}})";
  ParsedReview fast = ParseReview(body, kMaxNestingDepth);
  ASSERT_EQ(fast.status, ParsedReview::kOk);
  const json request = json::parse(body)["request"];
  const json want = {
      {"apiVersion", "admission.k8s.io/v1"},
      {"kind", "AdmissionReview"},
      {"request",
       {{"uid", "u"},
        {"operation", "CREATE"},
        {"kind", {{"group", "g"}, {"kind", ""}}},
        {"subResource", "scale"},
        {"name", ""},
        {"namespace", ""},
        {"oldObject",
         {{"json", request["oldObject"]}, {"isObject", true}, {"name", "n"}, {"spec", request["oldObject"]["spec"]}}},
        {"object",
         {{"json", request["object"]},
          {"isObject", true},
          {"name", "n"},
          {"generateName", "g-"},
          {"spec", request["object"]["spec"]}}}}}};
  ExpectSameTree(fast.View(), want, "");
  ExpectSameTree(fast.View(), Reference(body), "");
}

TEST(ReviewParser, NumberTypesMatchNlohmann) {
  for (const char* number : {"0",
                             "-0",
                             "1",
                             "-1",
                             "2.5",
                             "1e2",
                             "1E2",
                             "-1.5e-3",
                             "9223372036854775807",
                             "9223372036854775808",
                             "-9223372036854775808",
                             "-9223372036854775809",
                             "18446744073709551615",
                             "18446744073709551616",
                             "123456789012345678901234567890",
                             "0.1",
                             "1e308",
                             "4.9e-324",
                             "1e-400",
                             "0e40",
                             "-0e5"}) {
    SCOPED_TRACE(number);
    const std::string body = std::string(R"({"request":{"object":{"spec":{"replicas":)") + number + "}}}}";
    CheckAgainstNlohmann(body);
    EXPECT_EQ(ParseReview(body, kMaxNestingDepth).status, ParsedReview::kOk);
  }
  // Out of a double's range: nlohmann refuses (out_of_range 406), so the
  // parser must not accept.
  EXPECT_EQ(ParseReview(R"({"a":1e400})", kMaxNestingDepth).status, ParsedReview::kInvalid);
  EXPECT_EQ(ParseReview(R"({"a":-1e400})", kMaxNestingDepth).status, ParsedReview::kInvalid);
}

TEST(ReviewParser, BodiesNlohmannRefusesAreRefused) {
  const std::vector<std::string> bad = {
      "", " ", "{", "}", "{\"a\":}", "{\"a\":1,}", "[1,]", "{\"a\" 1}", "{'a':1}", "{\"a\":01}", "{\"a\":-}",
      "{\"a\":1.}", "{\"a\":.5}", "{\"a\":+1}", "{\"a\":NaN}", "{\"a\":Infinity}", "{\"a\":tru}", "{} {}", "{}x",
      "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"tab\there\"}", "{\"a\":\"nl\nhere\"}",
      // Control bytes 0x1A..0x1F in a string: RapidJSON's SSE2 scan lets them
      // through (found by the review fuzz targets), and before a document.
      "{\"a\":\"mo\x1d"
      "delops\"}",
      "{\"a\":\"x\x1a\"}", "{\"kind\":\"\x1f\"}", "\x01{}",
      // NUL bytes: inside a string, between tokens, after the document.
      std::string("{\"a\":\"x\0y\"}", 11), std::string("{\"a\":\0 1}", 9), std::string("{}\0", 3),
      // Ill-formed UTF-8: overlong, surrogate, above U+10FFFF, truncated, stray continuation.
      "{\"a\":\"\xC0\xAF\"}", "{\"a\":\"\xE0\x80\xAF\"}", "{\"a\":\"\xED\xA0\x80\"}", "{\"a\":\"\xF4\x90\x80\x80\"}",
      "{\"a\":\"\xF5\x80\x80\x80\"}", "{\"a\":\"\xE2\x82\"}", "{\"a\":\"\x80\"}", "{\"a\":\"\xFF\"}",
      // Lone and misordered surrogate escapes.
      "{\"a\":\"\\uD800\"}", "{\"a\":\"\\uDC00\"}", "{\"a\":\"\\udfff\"}", "{\"a\":\"\\uDC00\\uD800\"}",
      "{\"a\":\"\\uD800x\"}", "{\"\\uDC00\":1}",
      // A byte order mark anywhere but before the text.
      "{}\xEF\xBB\xBF",
      "{\"a\":\xEF\xBB\xBF"
      "1}"};
  for (const auto& body : bad) {
    SCOPED_TRACE(json(body).dump(-1, ' ', false, json::error_handler_t::replace));
    CheckAgainstNlohmann(body);
    // The same inside a member the parser keeps (decoded, not only
    // checked as a skipped member is).
    CheckAgainstNlohmann(R"({"request":{"object":{"spec":)" + body + "}}}");
    EXPECT_NE(ParseReview(R"({"request":{"object":{"spec":)" + body + "}}}", 1000).status, ParsedReview::kOk);
    EXPECT_NE(ParseReview(body, 1000).status, ParsedReview::kOk);
  }
  // Taken by both (and decoded alike): a surrogate pair, a byte order mark
  // before the text.
  CheckAgainstNlohmann("{\"a\":\"\\uD83D\\uDE00\"}");
  CheckAgainstNlohmann("{\"a\":\"\\udbff\\udfff \\ud800\\udc00\"}");
  CheckAgainstNlohmann("\xEF\xBB\xBF{\"a\":1}");
  CheckAgainstNlohmann("{\"a\":\"\xF0\x9F\x98\x80 \xE2\x82\xAC \xC3\xA9\"}");
  CheckAgainstNlohmann("{\"a\":\"\\u0000\\n\\\"\\/\\\\\"}");
}

TEST(ReviewParser, EscapesAndUtf8AreDecodedInKeptStringsAndKeys) {
  // Escapes in a key the parser matches by name, in nested keys and in
  // values, beside multi-byte UTF-8 and runs longer than one 16-byte load.
  const std::string body =
      "{\"req\\u0075est\":{\"object\":{\"sp\\u0065c\":{\"a\\tb\":\"x\\u00e9\\u20ac\\\"y\\\\z\\/\","
      "\"long\":\"0123456789abcdef0123456789abcdef\\n0123456789abcdef\\u0041\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80 end\","
      "\"\xC3\xA9\":[\"\\b\\f\\r\",\"\\u0000\"]}}},"
      "\"skipped\":\"\\u00e9\\\"\\\\\xE2\x82\xAC\"}";
  ParsedReview fast = ParseReview(body, kMaxNestingDepth);
  ASSERT_EQ(fast.status, ParsedReview::kOk);
  ExpectSameTree(fast.View(), Reference(body), "");
  const json spec = fast.View()["request"]["object"]["spec"];
  EXPECT_EQ(spec["a\tb"], "x\u00e9\u20ac\"y\\z/");
  EXPECT_EQ(spec["long"], "0123456789abcdef0123456789abcdef\n0123456789abcdefA\u00e9\u20ac\U0001F600 end");
  EXPECT_EQ(spec["\u00e9"], json({"\b\f\r", std::string(1, '\0')}));
}

TEST(ReviewParser, DuplicateKeysKeepTheLastValueAsNlohmannDoes) {
  const std::string body = R"({"request":{"uid":"a","uid":"b","object":{"spec":1},"object":{"spec":{"x":[1]}}}})";
  ParsedReview fast = ParseReview(body, kMaxNestingDepth);
  ASSERT_EQ(fast.status, ParsedReview::kOk);
  ExpectSameTree(fast.View(), Reference(body), "");
  EXPECT_EQ(fast.View()["request"]["uid"], "b");
  EXPECT_EQ(fast.View()["request"]["object"]["json"], json({{"spec", {{"x", {1}}}}}));
  // A repeated request: the last one's members only, none of the first's.
  const std::string twice =
      R"({"request":{"uid":"a","kind":{"kind":"K"},"object":{"spec":1}},"request":{"uid":"b","oldObject":{}}})";
  ParsedReview second = ParseReview(twice, kMaxNestingDepth);
  ASSERT_EQ(second.status, ParsedReview::kOk);
  ExpectSameTree(second.View(), Reference(twice), "");
  EXPECT_FALSE(second.request->object.has_value());
  EXPECT_FALSE(second.request->kind.has_value());
  EXPECT_TRUE(second.request->old_object.has_value());
  // Members of the wrong type read as absent text, a kind that is not an
  // object as no kind.
  const std::string wrong = R"({"request":{"uid":7,"operation":null,"kind":"ModelService","resource":{"group":1}}})";
  ParsedReview typed = ParseReview(wrong, kMaxNestingDepth);
  ASSERT_EQ(typed.status, ParsedReview::kOk);
  EXPECT_EQ(typed.request->uid, "");
  EXPECT_EQ(typed.request->operation, "");
  EXPECT_FALSE(typed.request->kind.has_value());
  ASSERT_TRUE(typed.request->resource.has_value());
  EXPECT_EQ(typed.request->resource->group, "");
  ExpectSameTree(typed.View(), Reference(wrong), "");
}

TEST(ReviewParser, DepthLimitStopsTheParseIncludingInsideSkippedSubtrees) {
  auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_EQ(ParseReview(nested(64), 64).status, ParsedReview::kOk);
  EXPECT_EQ(ParseReview(nested(65), 64).status, ParsedReview::kTooDeep);
  // Far deeper than the stack could take if the parse went on recursing.
  EXPECT_EQ(ParseReview(nested(1 << 20), 64).status, ParsedReview::kTooDeep);
  const std::string prefix = R"({"request":{"oldObject":)";
  EXPECT_EQ(ParseReview(prefix + nested(62) + "}}", 64).status, ParsedReview::kOk);
  EXPECT_EQ(ParseReview(prefix + nested(63) + "}}", 64).status, ParsedReview::kTooDeep);
}

// Random byte edits of the fixtures: wherever the parser accepts, nlohmann
// accepts too and reads the same.
TEST(ReviewParser, MutatedFixturesNeverDisagreeWithNlohmann) {
  std::mt19937 rng(20261130);
  const std::string alphabet =
      std::string("{}[]\":,\\ 0123456789.eE+-tfnuluD") + std::string("\x00\x80\xC3\xED\xF0\xFF", 6);
  int accepted = 0, total = 0;
  for (const auto& fixture : Fixtures()) {
    for (int round = 0; round < 1500; ++round) {
      std::string body = fixture;
      const int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits; ++e) {
        const size_t pos = rng() % body.size();
        const char c = alphabet[rng() % alphabet.size()];
        switch (rng() % 3) {
          case 0:
            body[pos] = c;
            break;
          case 1:
            body.insert(body.begin() + static_cast<std::ptrdiff_t>(pos), c);
            break;
          default:
            body.erase(pos, 1);
            break;
        }
      }
      ++total;
      if (ParseReview(body, 1000).status == ParsedReview::kOk) ++accepted;
      ASSERT_NO_FATAL_FAILURE(CheckAgainstNlohmann(body)) << "round " << round;
    }
  }
  // The edits must exercise both outcomes for the property to mean anything.
  EXPECT_GT(accepted, total / 10);
  EXPECT_LT(accepted, total * 9 / 10);
}

TEST(ReviewParser, IsValidUtf8FollowsRfc3629) {
  EXPECT_TRUE(text::IsValidUtf8(""));
  EXPECT_TRUE(text::IsValidUtf8("plain ascii, longer than eight bytes"));
  EXPECT_TRUE(text::IsValidUtf8("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF\xED\x9F\xBF"));
  for (const char* bad : {"\xC0\x80", "\xC1\xBF", "\xE0\x9F\xBF", "\xED\xA0\x80", "\xED\xBF\xBF", "\xF0\x8F\xBF\xBF",
                          "\xF4\x90\x80\x80", "\xF8\x88\x80\x80\x80", "\x80", "\xC3", "\xE2\x82", "abcdefgh\xC3"})
    EXPECT_FALSE(text::IsValidUtf8(bad)) << json(std::string(bad)).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace
}  // namespace ms::admission
