// The YAML reader converts as kubectl (sigs.k8s.io/yaml over go-yaml v2) does,
// and refuses hostile input with a message and a line instead of crashing.
#include "webhook/validate/yaml_reader.h"
#include "webhook/validate/yaml_writer.h"

#include <gtest/gtest.h>

#include "test/support/modelservice_corpus.h"

namespace ms::validate {
namespace {

using nlohmann::json;

json One(const std::string& text) {
  auto r = ReadYaml(text);
  EXPECT_FALSE(r.error) << text << ": " << *r.error;
  EXPECT_EQ(r.documents.size(), 1u) << text;
  return r.documents.empty() ? json() : r.documents[0].value;
}

json Value(const std::string& scalar) { return One("v: " + scalar)["v"]; }

std::string Error(const std::string& text) {
  auto r = ReadYaml(text);
  EXPECT_TRUE(r.error) << text;
  return r.error.value_or("");
}

TEST(YamlReader, ScalarsAsKubectlSendsThem) {
  // YAML 1.1 booleans and nulls (go-yaml v2).
  for (const char* t : {"true", "True", "yes", "Yes", "on", "ON", "y"}) EXPECT_EQ(Value(t), json(true)) << t;
  for (const char* f : {"false", "no", "No", "off", "n"}) EXPECT_EQ(Value(f), json(false)) << f;
  for (const char* n : {"~", "null", "Null", ""}) EXPECT_EQ(Value(n), json(nullptr)) << n;
  // Integers: decimal, 0x, 0o, leading-0 octal, 0b, underscores, signs.
  EXPECT_EQ(Value("3"), json(3));
  EXPECT_EQ(Value("-7"), json(-7));
  EXPECT_EQ(Value("+7"), json(7));
  EXPECT_EQ(Value("0x1F"), json(31));
  EXPECT_EQ(Value("0o17"), json(15));
  EXPECT_EQ(Value("017"), json(15));
  EXPECT_EQ(Value("0b101"), json(5));
  EXPECT_EQ(Value("1_000"), json(1000));
  EXPECT_EQ(Value("9223372036854775807"), json(INT64_MAX));
  // Floats: integral ones reach the API server as integers (Go's
  // encoding/json writes 2.0 as 2); others stay floats.
  EXPECT_EQ(Value("2.0"), json(2));
  EXPECT_TRUE(Value("2.0").is_number_integer());
  EXPECT_EQ(Value("1e2"), json(100));
  EXPECT_EQ(Value("08"), json(8));  // not octal, so a float: 8
  EXPECT_EQ(Value("2.5"), json(2.5));
  EXPECT_EQ(Value(".5"), json(0.5));
  EXPECT_TRUE(Value("18446744073709551615").is_number_float());  // beyond int64: a float at the API server
  EXPECT_TRUE(Value("1e21").is_number_float());
  // Strings: quoted, timestamps, percentages, anything else.
  EXPECT_EQ(Value("\"3\""), json("3"));
  EXPECT_EQ(Value("'yes'"), json("yes"));
  EXPECT_EQ(Value("!!str 3"), json("3"));
  EXPECT_EQ(Value("25%"), json("25%"));
  EXPECT_EQ(Value("2001-12-14"), json("2001-12-14"));
  EXPECT_EQ(Value("1e400"), json("1e400"));  // out of a double's range: go-yaml keeps the string
  EXPECT_EQ(Value("registry.local/serve:1.4"), json("registry.local/serve:1.4"));
  EXPECT_EQ(Value("|\n  a\n  b\n"), json("a\nb\n"));
  EXPECT_EQ(Value("!!int \"12\""), json(12));
  // NaN and infinities have no JSON form: kubectl refuses them.
  EXPECT_NE(Error("v: .nan").find("line 1"), std::string::npos);
  EXPECT_NE(Error("v: -.inf").find("no NaN or infinity"), std::string::npos);
  EXPECT_NE(Error("v: !!int abc").find("cannot decode"), std::string::npos);
}

TEST(YamlReader, KeysBecomeStringsAndTheLastDuplicateWins) {
  EXPECT_EQ(One("1: a\ntrue: b\n0x10: c\n"), json({{"1", "a"}, {"true", "b"}, {"16", "c"}}));
  EXPECT_EQ(One("a: 1\na: 2\n"), json({{"a", 2}}));
  EXPECT_EQ(One("y: 1\nno: 2\n"), json({{"true", 1}, {"false", 2}}));  // YAML 1.1, as go-yaml v2
  EXPECT_NE(Error("? [a]\n: 1\n").find("map key"), std::string::npos);
  EXPECT_NE(Error("~: 1\n").find("map key"), std::string::npos);
}

TEST(YamlReader, AnchorsAliasesAndMergeKeys) {
  EXPECT_EQ(One("a: &x {p: 1}\nb: *x\n"), json::parse(R"({"a":{"p":1},"b":{"p":1}})"));
  EXPECT_EQ(One("base: &b {port: 80, gpus: 1}\nspec:\n  <<: *b\n  gpus: 2\n")["spec"],
            json({{"port", 80}, {"gpus", 2}}));
  EXPECT_EQ(One("a: &a {x: 1}\nb: &b {x: 2, z: 2}\nc:\n  <<: [*a, *b]\n")["c"], json({{"x", 1}, {"z", 2}}));
  EXPECT_EQ(One("k: \"<<\"\n"), json({{"k", "<<"}}));
  EXPECT_NE(Error("a: *nope\n").find("line 1"), std::string::npos);
}

TEST(YamlReader, DocumentsAndTheirLines) {
  auto r = ReadYaml("# comment\na: 1\n---\n---\nb: 2\n...\n---\n\n  - x\n");
  ASSERT_FALSE(r.error) << *r.error;
  ASSERT_EQ(r.documents.size(), 4u);
  EXPECT_EQ(r.documents[0].value, json({{"a", 1}}));
  EXPECT_EQ(r.documents[0].line, 2);
  EXPECT_TRUE(r.documents[1].value.is_null());  // empty between two ---
  EXPECT_EQ(r.documents[2].value, json({{"b", 2}}));
  EXPECT_EQ(r.documents[2].line, 5);
  EXPECT_EQ(r.documents[3].value, json::array({"x"}));
  EXPECT_EQ(r.documents[3].line, 9);
  EXPECT_TRUE(ReadYaml("").documents.empty());
  // JSON is YAML, numbers included.
  EXPECT_EQ(One(R"({"spec": {"replicas": 1e2, "model": "m\u00e9", "x": [true, null]}})"),
            json::parse(R"({"spec":{"replicas":100,"model":"mé","x":[true,null]}})"));
}

TEST(YamlReader, BadInputIsAnErrorWithItsLine) {
  auto r = ReadYaml("a: 1\n---\nb: [1, 2\nc: 3\n");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.documents.size(), 1u);  // the documents before the error are kept
  EXPECT_EQ(r.error->rfind("line ", 0), 0u) << *r.error;
  EXPECT_NE(Error("a: b: c\n").find("line 1, column"), std::string::npos);
  EXPECT_NE(Error("a: {b: 1\n").find("line"), std::string::npos);
  EXPECT_EQ(Error(std::string("a: 1\nb: \x01\n")), "line 2: control characters are not allowed");
  EXPECT_EQ(Error("a: \xC3\x28\n"), "the text is not valid UTF-8");
  // yaml-cpp decodes the escapes \_ (U+00A0) and \N (U+0085) to one byte, not UTF-8
  // (found by the yaml_reader fuzz target): refused.
  EXPECT_EQ(Error("a: \"\\_\"\n"), "line 1, column 4: a scalar that is not valid UTF-8");
  EXPECT_EQ(Error("a: \"x\\N\"\n"), "line 1, column 4: a scalar that is not valid UTF-8");
  EXPECT_EQ(Error(std::string("a: \0\n", 5)), "line 1: control characters are not allowed");
  // yaml-cpp 0.7 reports empty documents forever on this (found by fuzzing).
  EXPECT_EQ(Error("a :&] #\n,"), "line 2, column 1: malformed YAML: the parser makes no progress");
}

TEST(YamlReader, HostileInputIsRefusedNotExpanded) {
  // "Billion laughs": nine levels of ten aliases would be 10^9 values.
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", *a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  EXPECT_NE(Error(bomb).find("aliases expand to more than 1000000 values"), std::string::npos);
  // Deep nesting: yaml-cpp stops at its depth limit, no stack overflow.
  EXPECT_NE(Error(std::string(100000, '[')).find("line 1"), std::string::npos);
  EXPECT_FALSE(Error(std::string(5000, '{') + std::string(5000, '}')).empty());
}

TEST(YamlReader, ToYamlReadsBackAsTheSameValue) {
  std::vector<json> values = test::ModelServiceCorpus(500);
  values.push_back(json("..."));  // a document end marker when plain at a line's start (fuzz finding 4)
  values.push_back(json::parse(R"({"...":"...","s":["...x","....",".5"]})"));
  values.push_back(json::parse(R"({"s":["yes","3","1e2","","a: b","- x","#c","~","null","25%","x:","é",
      "line\nbreak","tab\there"," lead","trail ","0x10","2001-12-14","<<","*a","&a","!t","%p","@a","`b"],
      "n":[1,-2,2.5,1e+300,true,false,null],"e":{},"a":[],"nested":[[1,[2]],{"k":[{}]}],"3":"key","true":1})"));
  // Keys too long for YAML's implicit keys (1024 characters), at the top,
  // nested and in a list (fuzz finding).
  const std::string long_key = std::string(1100, 'k') + " ~";
  values.push_back(
      {{long_key, nullptr}, {"m", {{long_key, {{"a", 1}}}}}, {"l", {{{long_key, {1, 2}}}, {{long_key, "v"}}}}});
  for (const json& v : values) {
    const std::string text = ToYaml(v);
    auto r = ReadYaml(text);
    ASSERT_FALSE(r.error) << text << "\n" << *r.error;
    ASSERT_EQ(r.documents.size(), 1u) << text;
    EXPECT_EQ(r.documents[0].value, v) << text;
  }
  EXPECT_EQ(
      ToYaml(json::parse(
          R"({"spec":{"model":"m","replicas":1,"strategy":{"rollingUpdate":{"maxSurge":"25%"}}},"version":"3"})")),
      "spec:\n  model: m\n  replicas: 1\n  strategy:\n    rollingUpdate:\n      maxSurge: 25%\nversion: \"3\"\n");
}

}  // namespace
}  // namespace ms::validate
