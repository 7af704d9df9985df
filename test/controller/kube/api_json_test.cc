#include "controller/kube/api_json.h"

#include <gtest/gtest.h>

#include <string>

namespace ms::kube {
namespace {

using nlohmann::json;

const KeptAnnotations kKeepOne{"keep.io/me"};

// An object as the API server sends it: managedFields, annotations of its
// own and in its pod template.
std::string Object(const std::string& name) {
  return R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":")" + name +
         R"(","annotations":{"keep.io/me":"1","big":")" + std::string(1000, 'x') +
         R"("},"managedFields":[{"manager":"kubectl","fieldsV1":{"f:spec":{}}}],"labels":{"a":"b"}},)"
         R"("spec":{"template":{"metadata":{"annotations":{"pod":"kept"}},"spec":{}}}})";
}

json Trimmed(const std::string& name) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", name}, {"annotations", {{"keep.io/me", "1"}}}, {"labels", {{"a", "b"}}}}},
          {"spec", {{"template", {{"metadata", {{"annotations", {{"pod", "kept"}}}}}, {"spec", json::object()}}}}}};
}

TEST(ApiJson, ListItemsKeepOnlyTheKeptAnnotationsAndNoManagedFields) {
  const std::string list = R"({"kind":"DeploymentList","apiVersion":"apps/v1","metadata":{"resourceVersion":"7",)"
                           R"("continue":"c"},"items":[)" +
                           Object("a") + "," + Object("b") + "]}";
  const json got = ParseApiJson(list, &kKeepOne);
  EXPECT_EQ(got, json({{"kind", "DeploymentList"},
                       {"apiVersion", "apps/v1"},
                       {"metadata", {{"resourceVersion", "7"}, {"continue", "c"}}},
                       {"items", {Trimmed("a"), Trimmed("b")}}}));
}

TEST(ApiJson, WatchEventAndSingleObjectAreTrimmedAlike) {
  EXPECT_EQ(ParseApiJson(R"({"type":"ADDED","object":)" + Object("a") + "}", &kKeepOne),
            json({{"type", "ADDED"}, {"object", Trimmed("a")}}));
  EXPECT_EQ(ParseApiJson(Object("a"), &kKeepOne), Trimmed("a"));
  const KeptAnnotations none;
  EXPECT_EQ(ParseApiJson(Object("a"), &none)["metadata"]["annotations"], json::object());
}

TEST(ApiJson, WithoutAFilterEveryAnnotationIsKeptButNoManagedFields) {
  json want = json::parse(Object("a"));
  want["metadata"].erase("managedFields");
  EXPECT_EQ(ParseApiJson(Object("a")), want);
  // Only metadata's managedFields are left out.
  EXPECT_EQ(ParseApiJson(R"({"metadata":{"managedFields":[]},"managedFields":1,"k":true})"),
            json({{"k", true}, {"managedFields", 1}, {"metadata", json::object()}}));
}

TEST(ApiJson, ValuesAreTypedAsNlohmannTypesThem) {
  const std::string text =
      R"({"u":5,"neg":-5,"big":18446744073709551615,"over":18446744073709551616,"f":1.5,"e":2e3,)"
      R"("s":"\u00e9\n\"","n":null,"t":true,"a":[[],{}],"dup":1,"dup":2,"min":-9223372036854775808,"x":0.1})";
  const json got = ParseApiJson(text);
  const json want = json::parse(text);
  EXPECT_EQ(got.dump(), want.dump());
  for (const auto& [key, value] : want.items()) EXPECT_EQ(got[key].type(), value.type()) << key;
  EXPECT_TRUE(got["u"].is_number_unsigned());
  EXPECT_TRUE(got["neg"].is_number_integer() && !got["neg"].is_number_unsigned());
  EXPECT_EQ(got["dup"], 2) << "the last duplicate wins";
  EXPECT_EQ(got["x"].get<double>(), 0.1);
}

// RapidJSON's full-precision conversion shifts by __builtin_clzll(0) on a
// zero significand with an exponent (undefined behaviour; UBSan stops the
// watch_decoder fuzz target on "0e40"): numbers are converted by strtod.
TEST(ApiJson, ZeroWithAnExponentIsTheDoubleNlohmannMakes) {
  for (const std::string zero : {"0e40", "-0e5", "0.000e400", "0E+308", "0.0e-400", "00e1"}) {
    const std::string text = R"({"z":)" + zero + "}";
    const json want = json::parse(text, nullptr, false);
    const json got = ParseApiJson(text);
    ASSERT_EQ(got.is_discarded(), want.is_discarded()) << zero;
    if (want.is_discarded()) continue;
    EXPECT_TRUE(got["z"].is_number_float()) << zero;
    EXPECT_EQ(got.dump(), want.dump()) << zero;
  }
}

TEST(ApiJson, WhatNlohmannRefusesIsRefused) {
  for (const std::string bad : {"{nope", "{} x", "", "{\"a\":1,}", "[1 2]", "{\"s\":\"\xff\"}", R"({"s":"\udc00"})",
                                R"({"s":"\ud800"})", "{\"s\":\"a\tb\"}", "NaN", "01", "1e400000"}) {
    EXPECT_TRUE(ParseApiJson(bad, &kKeepOne).is_discarded()) << bad;
    EXPECT_TRUE(json::parse(bad, nullptr, false).is_discarded()) << bad;
  }
  // A valid surrogate pair (left to nlohmann) is taken.
  EXPECT_EQ(ParseApiJson(R"({"s":"\ud83d\ude00"})")["s"], "\xF0\x9F\x98\x80");
}

TEST(ApiJson, DeepNestingNeitherRecursesNorFails) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const json got = ParseApiJson(deep);
  ASSERT_TRUE(got.is_array());
}

}  // namespace
}  // namespace ms::kube
