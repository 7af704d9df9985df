// The generator's kinds of field (tools/apigen/kinds.py), each generated from
// a definition that has one field of every kind (testdata/every-kind.schema.json,
// generated at build time): what the parser reads, the errors it words, the
// JSON form and the defaults. The ModelService uses only some kinds today;
// these tests are what makes the others ready to use.
#include <gtest/gtest.h>

#include "fixture_spec.gen.h"
#include "shared/api/field_reader.h"
#include "shared/api/patch_text.h"
#include "shared/process/files.h"
#include "test/support/schema_validator.h"

namespace ms::api::fixture {
namespace {

using nlohmann::json;

struct Parsed {
  WidgetSpec spec;
  std::vector<FieldError> errors;
  std::vector<std::string> warnings;
  std::string Errors() const { return JoinErrors(errors); }
};

Parsed Parse(const json& spec) {
  Parsed p;
  std::string text = spec.dump();
  const size_t size = text.size();
  text.resize(size + text::JsonReader::kPadding, '\0');
  text::JsonReader in(text.data(), size, 64);
  FieldReader r(in, "spec", {p.errors, p.warnings});
  ReadFields(r, p.spec);
  return p;
}
Parsed Parse(const char* text) { return Parse(json::parse(text)); }

TEST(GeneratedKinds, ReadsEveryKindAndWritesItBack) {
  const json spec = json::parse(R"({"name":"w","note":"n","count":4,"ceiling":-2,"enabled":false,
    "pullPolicy":"Always","surge":"10%","memory":"8Gi","target":"metrics","args":["a","bc"],
    "env":[{"name":"A","value":"1"},{"name":"B"}],"labels":{"k":"v"},"requests":{"cpu":"500m","gpu":2},
    "ports":{"http":{"number":80}},"affinity":{"nodeAffinity":{"x":[1]}},
    "policy":{"mode":"Tuned","tuning":{"level":1}}})");
  const Parsed p = Parse(spec);
  EXPECT_EQ(p.Errors(), "");
  EXPECT_TRUE(p.warnings.empty());
  const WidgetSpec& s = p.spec;
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.enabled, false);
  EXPECT_EQ(s.pull_policy, PullPolicy::kAlways);
  EXPECT_EQ(s.surge, (IntOrPercent{10, true}));
  EXPECT_EQ(s.memory, (Quantity{"8Gi", false}));
  EXPECT_EQ(s.target, (PortNumberOrName{.number = 0, .name = "metrics", .is_name = true}));
  EXPECT_EQ(s.args, (std::vector<std::string>{"a", "bc"}));
  ASSERT_TRUE(s.env);
  ASSERT_EQ(s.env->size(), 2u);
  EXPECT_EQ((*s.env)[1].name, "B");
  EXPECT_FALSE((*s.env)[1].value);
  EXPECT_EQ(s.requests->at("gpu"), (Quantity{"2", true}));
  EXPECT_EQ(s.ports->at("http").number, 80);
  EXPECT_EQ(s.policy->tuning->level, 1);
  EXPECT_EQ(ToJsonValue(s), spec);  // every kind writes back what it read
}

TEST(GeneratedKinds, ErrorsNameTheFieldItemAndEntry) {
  EXPECT_EQ(Parse(R"({})").Errors(), "spec.name: Required value");
  EXPECT_EQ(Parse(R"({"name":"a b"})").Errors(),
            "spec.name: Invalid value: \"a b\": must be a non-empty string with no whitespace or control characters");
  EXPECT_EQ(Parse(R"({"name":"w","code":"a"})").Errors(),
            "spec.code: Invalid value: \"a\": must be at least 2 bytes long");
  EXPECT_EQ(Parse(R"({"name":"w","ceiling":6})").Errors(),
            "spec.ceiling: Invalid value: 6: must be less than or equal to 5");
  EXPECT_EQ(Parse(R"({"name":"w","enabled":"yes"})").Errors(),
            "spec.enabled: Invalid value: \"yes\": must be of type boolean, not string");
  EXPECT_EQ(Parse(R"({"name":"w","pullPolicy":"Never"})").Errors(),
            "spec.pullPolicy: Unsupported value: \"Never\": supported values: \"Always\", \"IfNotPresent\"");
  EXPECT_EQ(Parse(R"({"name":"w","args":["a",1,"toolong"]})").Errors(),
            "spec.args[1]: Invalid value: 1: must be of type string, not integer; "
            "spec.args[2]: Too long: may not be more than 4 bytes");
  EXPECT_EQ(Parse(R"({"name":"w","args":["a","b","c","d"]})").Errors(),
            "spec.args: Too many: 4: must have at most 3 items");
  EXPECT_EQ(Parse(R"({"name":"w","args":"a"})").Errors(),
            "spec.args: Invalid value: \"a\": must be of type array, not string");
  EXPECT_EQ(Parse(R"({"name":"w","env":[{"value":"x"},7]})").Errors(),
            "spec.env[0].name: Required value; spec.env[1]: Invalid value: 7: must be of type object, not integer");
  EXPECT_EQ(Parse(R"({"name":"w","labels":{"a":"123456","b":2}})").Errors(),
            "spec.labels[a]: Too long: may not be more than 5 bytes; "
            "spec.labels[b]: Invalid value: 2: must be of type string, not integer");
  EXPECT_EQ(Parse(R"({"name":"w","labels":{"a":"1","b":"2","c":"3"}})").Errors(),
            "spec.labels: Too many: 3: must have at most 2 items");  // maxProperties, as the API server words it
  EXPECT_EQ(Parse(R"({"name":"w","ports":{"http":{"number":0}}})").Errors(),
            "spec.ports[http].number: Invalid value: 0: must be between 1 and 65535");
  EXPECT_EQ(Parse(R"({"name":"w","affinity":[]})").Errors(),
            "spec.affinity: Invalid value: []: must be of type object, not array");
  EXPECT_EQ(Parse(R"({"name":"w","policy":{"tuning":{"level":4}}})").Errors(),
            "spec.policy.tuning.level: Invalid value: 4: must be between 1 and 3");
  // Unknown members are warned about in objects and in the objects of an array, not in maps.
  const Parsed p = Parse(R"({"name":"w","colour":1,"env":[{"name":"A","from":2}],"labels":{"any":"x"}})");
  EXPECT_EQ(p.Errors(), "");
  EXPECT_EQ(p.warnings,
            (std::vector<std::string>{"unknown field \"spec.colour\"", "unknown field \"spec.env[0].from\""}));
}

TEST(GeneratedKinds, Quantities) {
  for (const char* ok : {"1", "0.5", ".5", "500m", "2Ki", "8Gi", "1e3", "1E-2", "+1", "-1.5M", "1.e3"}) {
    EXPECT_EQ(Parse(json{{"name", "w"}, {"memory", ok}}).Errors(), "") << ok;
  }
  for (const char* bad : {"", "m", "1.2.3", "8GB", "8gi", "1e", "1e3.5.1", "Ki", "1 Gi", "0x10"}) {
    EXPECT_EQ(Parse(json{{"name", "w"}, {"memory", bad}}).Errors(),
              "spec.memory: Invalid value: " + json(bad).dump() + ": must be a quantity such as 500m, 2 or 8Gi")
        << bad;
  }
  EXPECT_NE(Parse(R"({"name":"w","memory":1.5})").Errors(), "");
}

// A port is a number of 1 to 65535 or an IANA service name, worded as the
// Pod API words a probe's port.
TEST(GeneratedKinds, Ports) {
  for (const json& ok :
       {json(1), json(8080), json(65535), json("http"), json("a"), json("metrics-2"), json("abcdefghijklmno")}) {
    EXPECT_EQ(Parse(json{{"name", "w"}, {"target", ok}}).Errors(), "") << ok;
  }
  EXPECT_EQ(Parse(R"({"name":"w","target":0})").Errors(),
            "spec.target: Invalid value: 0: must be between 1 and 65535, inclusive");
  EXPECT_EQ(Parse(R"({"name":"w","target":65536})").Errors(),
            "spec.target: Invalid value: 65536: must be between 1 and 65535, inclusive");
  EXPECT_EQ(Parse(R"({"name":"w","target":1.5})").Errors(),
            "spec.target: Invalid value: 1.5: must be of type integer or string, not number");
  for (const char* bad : {"", "HTTP", "-a", "a-", "a_b", "abcdefghijklmnop", "80"}) {
    EXPECT_NE(Parse(json{{"name", "w"}, {"target", bad}}).Errors(), "") << bad;
  }
}

TEST(GeneratedKinds, DefaultsIncludingConditionalObjects) {
  WidgetSpec s = Parse(R"({"name":"w","env":[{"name":"A"}]})").spec;
  ApplyDefaults(s);
  EXPECT_EQ(ToJsonValue(s),
            json::parse(R"({"name":"w","note":"none","count":3,"enabled":true,"pullPolicy":"IfNotPresent",
      "env":[{"name":"A","value":""}],"policy":{"mode":"Tuned","tuning":{"level":2}}})"));
  // The conditional object is neither added nor defaulted when its condition does not hold.
  WidgetSpec simple = Parse(R"({"name":"w","policy":{"mode":"Simple","tuning":{}}})").spec;
  ApplyDefaults(simple);
  EXPECT_EQ(ToJsonValue(simple)["policy"], json::parse(R"({"mode":"Simple","tuning":{}})"));
  // A value given is never replaced.
  WidgetSpec given = Parse(R"({"name":"w","count":0,"enabled":false})").spec;
  ApplyDefaults(given);
  EXPECT_EQ(given.count, 0);
  EXPECT_EQ(given.enabled, false);
}

// The defaults patch (generated AppendDefaultsPatch): an `add` of each
// default the object lacks, a whole object where it is missing, nothing
// inside a value of the wrong type, and nothing inside an array's items
// (their defaults reach the typed spec only, as DefaultedObject leaves
// arrays whole).
std::string Patch(const char* spec_text) {
  const WidgetSpec have = Parse(json::parse(spec_text)).spec;
  WidgetSpec d = have;
  ApplyDefaults(d);
  AddPatchWriter w;
  const AddPatchWriter::Scope scope(w, "spec");
  AppendDefaultsPatch(have, d, w);
  return std::move(w).Finish();
}

TEST(GeneratedKinds, DefaultsPatchAddsWhatIsMissingInTheDefinitionsOrder) {
  EXPECT_EQ(Patch(R"({"name":"w","count":5,"env":[{"name":"A"}],"policy":{"mode":"Tuned"}})"),
            R"([{"op":"add","path":"/spec/note","value":"none"},{"op":"add","path":"/spec/enabled","value":true},)"
            R"({"op":"add","path":"/spec/pullPolicy","value":"IfNotPresent"},)"
            R"({"op":"add","path":"/spec/policy/tuning","value":{"level":2}}])");
  EXPECT_EQ(Patch(R"({"name":"w","note":"n","count":1,"enabled":false,"pullPolicy":"Always"})"),
            R"([{"op":"add","path":"/spec/policy","value":{"mode":"Tuned","tuning":{"level":2}}}])");
  EXPECT_EQ(Patch(R"({"name":"w","note":7,"count":"x","enabled":false,"pullPolicy":"Always","policy":[]})"), "");
  EXPECT_EQ(Patch(R"({"note":"n","count":1,"enabled":false,"pullPolicy":"Always",)"
                  R"("policy":{"mode":"Simple"}})"),
            "");
}

TEST(GeneratedKinds, RulesAndFieldOrderComeFromTheDefinition) {
  static_assert(WidgetSpec::kCount.min == 0 && WidgetSpec::kCount.max == 9 && *WidgetSpec::kCount.default_value == 3);
  static_assert(WidgetSpec::kArgs.max_items == 3);
  static_assert(WidgetSpec::kLabels.max_properties == 2);
  static_assert(ToString(PolicyMode::kTuned) == std::string_view("Tuned"));
  EXPECT_LT(FieldRank("spec"), FieldRank("name"));
  EXPECT_LT(FieldRank("env"), FieldRank("value"));  // an array's item fields follow it
  EXPECT_LT(FieldRank("mode"), FieldRank("level"));
  EXPECT_EQ(FieldRank("unknown"), FieldRank("other"));
}

// The parser of every kind and the schema the CRD carries (compiled by
// valijson) agree: a value breaks the schema exactly when the parser reports
// an error, for each field of each kind.
TEST(GeneratedKinds, ParserAgreesWithTheSchema) {
  const test::SchemaValidator schema(process::ReadFile(MS_FIXTURE_SCHEMA));
  const std::vector<json> values = {nullptr,
                                    true,
                                    0,
                                    1,
                                    -1,
                                    3,
                                    4,
                                    6,
                                    9,
                                    10,
                                    2.5,
                                    "",
                                    "a",
                                    "a b",
                                    "toolong!!",
                                    "Always",
                                    "Tuned",
                                    "10%",
                                    "101%",
                                    "500m",
                                    "8Gi",
                                    "8GB",
                                    65535,
                                    65536,
                                    "http",
                                    "HTTP",
                                    "a-b",
                                    "abcdefghijklmnop",
                                    json::object(),
                                    json::array(),
                                    json::array({"a"}),
                                    json::array({"a", "b", "c"}),
                                    json::array({"a", "b", "c", "d"}),
                                    json::array({1}),
                                    json::array({json::object()}),
                                    json::array({{{"name", "n"}}}),
                                    json{{"k", "v"}},
                                    json{{"a", "v"}, {"b", "v"}},
                                    json{{"a", "v"}, {"b", "v"}, {"c", "v"}},
                                    json{{"k", 1}},
                                    json{{"k", {{"number", 0}}}},
                                    json{{"k", {{"number", 1}}}},
                                    json{{"level", 3}},
                                    json{{"level", 0}},
                                    json{{"mode", "Simple"}},
                                    json{{"tuning", 1}}};
  const std::vector<std::string> fields = {"name",       "note",     "code",   "count",    "ceiling", "enabled",
                                           "pullPolicy", "surge",    "memory", "target",   "args",    "env",
                                           "labels",     "requests", "ports",  "affinity", "policy"};
  int disagreements = 0;
  for (const std::string& field : fields) {
    for (const json& v : values) {
      json spec = {{"name", "w"}};
      spec[field] = v;
      const bool parser_ok = Parse(spec).errors.empty();
      const bool schema_ok = schema.Validate(json{{"spec", spec}}).empty();
      EXPECT_EQ(parser_ok, schema_ok) << spec.dump() << ": " << Parse(spec).Errors();
      disagreements += parser_ok != schema_ok;
    }
  }
  EXPECT_EQ(disagreements, 0);
}

}  // namespace
}  // namespace ms::api::fixture
