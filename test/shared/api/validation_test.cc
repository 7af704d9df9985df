#include "shared/api/validation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "test/support/modelservice_catalogue.h"
#include "test/support/modelservice_schema.h"

namespace ms::api {
namespace {

using nlohmann::json;

// A field path with map keys as valijson's paths name them:
// "spec.nodeSelector[pool]" -> "spec.nodeSelector.pool" (indices stay).
std::string SchemaPath(const std::string& path) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    const size_t close = path[i] == '[' ? path.find(']', i) : std::string::npos;
    if (close == std::string::npos) {
      out += path[i];
      continue;
    }
    const std::string inner = path.substr(i + 1, close - i - 1);
    const bool index = !inner.empty() && inner.find_first_not_of("0123456789") == std::string::npos;
    out += index ? "[" + inner + "]" : "." + inner;
    i = close;
  }
  return out;
}

// Whether `error` explains a violation valijson reports at `schema_path`:
// one path is the other or a field above it.
bool ErrorCovers(const FieldError& error, const std::string& schema_path) {
  const std::string a = SchemaPath(error.path);
  const std::string& b = schema_path;
  const std::string& shorter = a.size() <= b.size() ? a : b;
  const std::string& longer = a.size() <= b.size() ? b : a;
  if (shorter.empty() || shorter == "<root>") return true;
  if (longer.compare(0, shorter.size(), shorter) != 0) return false;
  return longer.size() == shorter.size() || longer[shorter.size()] == '.' || longer[shorter.size()] == '[';
}

class ValidationTest : public ::testing::Test {
 protected:
  static const test::SchemaValidator& Schema() { return test::ModelServiceSchema(); }
  static json Valid() {
    return json::parse(R"({"apiVersion":"modelops.dev/v1","kind":"ModelService","metadata":{"name":"bert-qa"},
      "spec":{"model":"bert-base-uncased","version":"3","image":"registry.local/serve:1.4","replicas":2,"port":8080,
      "gpus":1,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":0}}}})");
  }
  static std::string Message(const json& obj) { return JoinErrors(ValidateModelService(obj).errors); }
  static std::string WithSpec(const std::string& field, const json& value) {
    json o = Valid();
    o["spec"][field] = value;
    return Message(o);
  }
};

TEST_F(ValidationTest, ValidObjectHasNoErrorsOrWarnings) {
  auto out = ValidateModelService(Valid());
  EXPECT_TRUE(out.ok()) << JoinErrors(out.errors);
  EXPECT_TRUE(out.warnings.empty());
}

// An integer beyond int64 is out of every range (the schema, as valijson
// checks it, reads it as negative), not saturated into one.
TEST_F(ValidationTest, IntegersBeyondInt64AreOutOfRange) {
  json o = Valid();
  o["spec"]["autoscaling"] = {{"maxReplicas", 5}, {"targetQueueLength", 18446744073709551615ULL}};
  EXPECT_EQ(Message(o),
            "spec.autoscaling.targetQueueLength: Invalid value: 18446744073709551615: must be less than or equal to "
            "9223372036854775807");
  o["spec"]["autoscaling"]["targetQueueLength"] = 9223372036854775807LL;
  EXPECT_EQ(Message(o), "");
  EXPECT_EQ(WithSpec("replicas", 9223372036854775808ULL),
            "spec.replicas: Invalid value: 9223372036854775808: must be between 1 and 100");
  o["spec"]["strategy"]["rollingUpdate"]["maxSurge"] = 9223372036854775808ULL;
  EXPECT_EQ(Message(o),
            "spec.strategy.rollingUpdate.maxSurge: Invalid value: 9223372036854775808: must be an integer >= 0 or a "
            "percentage between 0% and 100%");
}

TEST_F(ValidationTest, RangesInTheApiServersWording) {
  EXPECT_EQ(WithSpec("replicas", 0), "spec.replicas: Invalid value: 0: must be between 1 and 100");
  EXPECT_EQ(WithSpec("replicas", 101), "spec.replicas: Invalid value: 101: must be between 1 and 100");
  EXPECT_EQ(WithSpec("replicas", 100), "");
  EXPECT_EQ(WithSpec("port", 0), "spec.port: Invalid value: 0: must be between 1 and 65535");
  EXPECT_EQ(WithSpec("port", 65536), "spec.port: Invalid value: 65536: must be between 1 and 65535");
  EXPECT_EQ(WithSpec("gpus", 17), "spec.gpus: Invalid value: 17: must be between 0 and 16");
  EXPECT_EQ(WithSpec("gpus", -1), "spec.gpus: Invalid value: -1: must be between 0 and 16");
}

TEST_F(ValidationTest, WrongTypesAndNumberForms) {
  EXPECT_EQ(WithSpec("replicas", "3"), "spec.replicas: Invalid value: \"3\": must be of type integer, not string");
  EXPECT_EQ(WithSpec("replicas", json::parse("2.5")),
            "spec.replicas: Invalid value: 2.5: must be of type integer, not number");
  EXPECT_EQ(WithSpec("replicas", json::parse("1e2")),
            "spec.replicas: Invalid value: 100.0: must be of type integer, not number");
  // Beyond 64 bits nlohmann parses a float: still not an integer, no overflow.
  EXPECT_EQ(WithSpec("replicas", json::parse("99999999999999999999999")),
            "spec.replicas: Invalid value: 9.999999999999999e+22: must be of type integer, not number");
  // Fits uint64 but not int64: out of range, not wrapped to a negative.
  EXPECT_EQ(WithSpec("replicas", json::parse("18446744073709551615")),
            "spec.replicas: Invalid value: 18446744073709551615: must be between 1 and 100");
  EXPECT_EQ(WithSpec("replicas", json::parse("-9223372036854775808")),
            "spec.replicas: Invalid value: -9223372036854775808: must be between 1 and 100");
  EXPECT_EQ(WithSpec("replicas", nullptr), "spec.replicas: Invalid value: null: must be of type integer, not null");
  EXPECT_EQ(WithSpec("model", 5), "spec.model: Invalid value: 5: must be of type string, not integer");
  json o = Valid();
  o["spec"] = "x";
  EXPECT_EQ(Message(o), "spec: Invalid value: \"x\": must be of type object, not string");
}

TEST_F(ValidationTest, Model) {
  json o = Valid();
  o["spec"].erase("model");
  EXPECT_EQ(Message(o), "spec.model: Required value");
  EXPECT_EQ(WithSpec("model", ""),
            "spec.model: Invalid value: \"\": must be a non-empty string with no whitespace or control characters");
  EXPECT_EQ(WithSpec("model", "bert base"),
            "spec.model: Invalid value: \"bert base\": must be a non-empty string with no whitespace or control "
            "characters");
  EXPECT_EQ(WithSpec("model", std::string("a\x01", 2)),
            "spec.model: Invalid value: \"a\\u0001\": must be a non-empty string with no whitespace or control "
            "characters");
  EXPECT_EQ(WithSpec("model", std::string(253, 'm')), "");
  EXPECT_EQ(WithSpec("model", std::string(254, 'm')), "spec.model: Too long: may not be more than 253 bytes");
  // A huge string is refused by length before any regex runs (no stack overflow).
  EXPECT_EQ(WithSpec("model", std::string(200000, 'm')), "spec.model: Too long: may not be more than 253 bytes");
  EXPECT_EQ(WithSpec("model", "org/model-ü:v1"), "");
  // A long value is quoted up to 128 bytes, cut before a character, never
  // inside one (found by the review fuzz target: the logged message was not
  // UTF-8): 126 bytes of the quote and "m, then "ü" would straddle byte 128.
  EXPECT_EQ(WithSpec("model", std::string(126, 'm') + "\u00fc\u00fc bad"),
            "spec.model: Invalid value: \"" + std::string(126, 'm') +
                "...: must be a non-empty string with no whitespace or control characters");

  EXPECT_EQ(WithSpec("version", std::string(64, 'v')), "spec.version: Too long: may not be more than 63 bytes");
  EXPECT_EQ(WithSpec("image", ""), "spec.image: Invalid value: \"\": must not be empty");
  json none = Valid();
  none.erase("spec");
  EXPECT_EQ(Message(none), "spec: Required value");
}

TEST_F(ValidationTest, StrategyRules) {
  json o = Valid();
  o["spec"]["strategy"] = {{"type", "Rolling"}};
  EXPECT_EQ(Message(o),
            "spec.strategy.type: Unsupported value: \"Rolling\": supported values: \"RollingUpdate\", \"Recreate\"");
  o["spec"]["strategy"] = {{"type", "Recreate"}, {"rollingUpdate", {{"maxSurge", 1}}}};
  EXPECT_EQ(Message(o),
            "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy type is 'Recreate'");
  o["spec"]["strategy"] = {{"type", "Recreate"}};
  EXPECT_EQ(Message(o), "");
  o["spec"]["strategy"] = {{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxSurge", 0}, {"maxUnavailable", "0%"}}}};
  EXPECT_EQ(Message(o),
            "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: \"0%\": may not be 0 when maxSurge is 0");
  o["spec"]["strategy"]["rollingUpdate"] = {{"maxSurge", "150%"}, {"maxUnavailable", -1}};
  EXPECT_EQ(Message(o),
            "spec.strategy.rollingUpdate.maxSurge: Invalid value: \"150%\": must be an integer >= 0 or a percentage "
            "between 0% and 100%; spec.strategy.rollingUpdate.maxUnavailable: Invalid value: -1: must be an integer "
            ">= 0 or a percentage between 0% and 100%");
  o["spec"]["strategy"]["rollingUpdate"] = {{"maxSurge", "100%"}, {"maxUnavailable", 3}};
  EXPECT_EQ(Message(o), "");
}

TEST_F(ValidationTest, TargetGPUUtilization) {
  json o = Valid();
  o["spec"]["gpus"] = 1;
  o["spec"]["autoscaling"] = {{"maxReplicas", 10}, {"targetQueueLength", 5}, {"targetGPUUtilization", 60}};
  EXPECT_EQ(Message(o), "");
  for (int bad : {0, 101}) {
    o["spec"]["autoscaling"]["targetGPUUtilization"] = bad;
    EXPECT_EQ(Message(o), "spec.autoscaling.targetGPUUtilization: Invalid value: " + std::to_string(bad) +
                              ": must be between 1 and 100");
  }
  o["spec"]["autoscaling"]["targetGPUUtilization"] = "60";
  EXPECT_EQ(Message(o),
            "spec.autoscaling.targetGPUUtilization: Invalid value: \"60\": must be of type integer, not string");
  o["spec"]["autoscaling"]["targetGPUUtilization"] = 60;
  o["spec"]["gpus"] = 0;
  EXPECT_EQ(
      Message(o),
      "spec.autoscaling.targetGPUUtilization: Invalid value: 60: may only be set when spec.gpus is greater than 0");
}

TEST_F(ValidationTest, AutoscalingRulesAndWarnings) {
  json o = Valid();
  o["spec"]["autoscaling"] = {{"minReplicas", 5}, {"maxReplicas", 3}, {"targetQueueLength", 4}};
  EXPECT_EQ(Message(o),
            "spec.autoscaling.minReplicas: Invalid value: 5: must be less than or equal to maxReplicas (3)");
  o["spec"]["autoscaling"] = json::object();
  EXPECT_EQ(Message(o),
            "spec.autoscaling.maxReplicas: Required value; spec.autoscaling.targetQueueLength: Required value");
  o["spec"]["autoscaling"] = {{"maxReplicas", 10}, {"targetQueueLength", 0}};
  EXPECT_EQ(Message(o), "spec.autoscaling.targetQueueLength: Invalid value: 0: must be greater than or equal to 1");
  o["spec"]["autoscaling"] = {{"mode", "Auto"}, {"maxReplicas", 10}, {"targetQueueLength", 5}};
  EXPECT_EQ(Message(o),
            "spec.autoscaling.mode: Unsupported value: \"Auto\": supported values: \"Controller\", \"HPA\"");
  o["spec"]["autoscaling"]["mode"] = "HPA";
  EXPECT_EQ(Message(o), "");

  o["spec"]["autoscaling"] = {{"minReplicas", 3}, {"maxReplicas", 10}, {"targetQueueLength", 5}};
  o["spec"]["replicas"] = 20;
  o["spec"]["extra"] = true;
  o["spec"].erase("image");
  auto out = ValidateModelService(o);
  EXPECT_TRUE(out.ok()) << JoinErrors(out.errors);
  EXPECT_EQ(out.warnings,
            (std::vector<std::string>{
                "unknown field \"spec.extra\"",
                "spec.replicas (20) is outside [minReplicas, maxReplicas] = [3, 10]: with spec.autoscaling set, the "
                "autoscaler decides the replica count",
                "spec.gpus is 1 but spec.image is not set: the controller's --default-image will be used; make sure "
                "it supports GPUs"}));
}

// spec.rollout (issue 15).
TEST_F(ValidationTest, RolloutRules) {
  json o = Valid();
  o["spec"]["rollout"] = {{"timeoutSeconds", 29}};
  EXPECT_EQ(Message(o), "spec.rollout.timeoutSeconds: Invalid value: 29: must be between 30 and 3600");
  o["spec"]["rollout"] = {{"timeoutSeconds", 3601}};
  EXPECT_EQ(Message(o), "spec.rollout.timeoutSeconds: Invalid value: 3601: must be between 30 and 3600");
  o["spec"]["rollout"] = {{"timeoutSeconds", "30s"}};
  EXPECT_EQ(Message(o), "spec.rollout.timeoutSeconds: Invalid value: \"30s\": must be of type integer, not string");
  o["spec"]["rollout"] = {{"rollback", "Auto"}};
  EXPECT_EQ(Message(o),
            "spec.rollout.rollback: Unsupported value: \"Auto\": supported values: \"Manual\", \"Automatic\"");
  o["spec"]["rollout"] = {{"rollback", true}};
  EXPECT_EQ(Message(o), "spec.rollout.rollback: Invalid value: true: must be of type string, not boolean");
  o["spec"]["rollout"] = 600;
  EXPECT_EQ(Message(o), "spec.rollout: Invalid value: 600: must be of type object, not integer");
  for (const json& ok : {json::object(), json{{"timeoutSeconds", 30}, {"rollback", "Automatic"}},
                         json{{"timeoutSeconds", 3600}, {"rollback", "Manual"}}}) {
    o["spec"]["rollout"] = ok;
    EXPECT_EQ(Message(o), "") << ok.dump();
  }
  o["spec"]["rollout"] = {{"timeoutSeconds", 60}, {"retries", 3}};
  auto out = ValidateModelService(o);
  EXPECT_TRUE(out.ok());
  EXPECT_EQ(out.warnings, (std::vector<std::string>{"unknown field \"spec.rollout.retries\""}));
}

TEST_F(ValidationTest, ListsEveryError) {
  json o = Valid();
  o["spec"] = {{"model", ""}, {"replicas", 0}, {"port", 70000}, {"gpus", 99}};
  auto out = ValidateModelService(o);
  EXPECT_EQ(out.errors.size(), 4u) << JoinErrors(out.errors);
}

// The typed spec's parser (generated from the same definition) and the
// compiled schema agree: an object breaks the schema exactly when the parser
// reports an error.
TEST_F(ValidationTest, ParserAgreesWithTheSchema) {
  std::vector<json> values = {json(nullptr),
                              json(true),
                              json(0),
                              json(1),
                              json(-1),
                              json(16),
                              json(17),
                              json(100),
                              json(101),
                              json(65535),
                              json(65536),
                              json(9223372036854775807LL),
                              json(9223372036854775808ULL),
                              json(18446744073709551615ULL),
                              json(2.5),
                              json::parse("1e2"),
                              json(""),
                              json("x"),
                              json("a b"),
                              json("25%"),
                              json("0%"),
                              json("100%"),
                              json("101%"),
                              json("5"),
                              json(std::string(254, 'a')),
                              json::object(),
                              json::array(),
                              json("Recreate"),
                              json("RollingUpdate"),
                              json("Controller"),
                              json("HPA"),
                              json("hpa"),

                              json(29),
                              json(30),
                              json(3600),
                              json(3601),
                              json("Manual"),
                              json("Automatic")};
  std::vector<std::vector<std::string>> paths = {{"model"},
                                                 {"version"},
                                                 {"image"},
                                                 {"replicas"},
                                                 {"port"},
                                                 {"gpus"},
                                                 {"strategy"},
                                                 {"strategy", "type"},
                                                 {"strategy", "rollingUpdate"},
                                                 {"strategy", "rollingUpdate", "maxSurge"},
                                                 {"strategy", "rollingUpdate", "maxUnavailable"},
                                                 {"autoscaling"},
                                                 {"autoscaling", "mode"},
                                                 {"autoscaling", "minReplicas"},
                                                 {"autoscaling", "maxReplicas"},
                                                 {"autoscaling", "targetQueueLength"},
                                                 {"rollout"},
                                                 {"rollout", "timeoutSeconds"},
                                                 {"rollout", "rollback"}};
  int checked = 0;
  for (const auto& path : paths) {
    for (const auto& v : values) {
      json o = {{"spec",
                 {{"model", "m"},
                  {"strategy", {{"rollingUpdate", json::object()}}},
                  {"autoscaling", {{"maxReplicas", 5}, {"targetQueueLength", 2}}},
                  {"rollout", json::object()}}}};
      json* cur = &o["spec"];
      for (size_t i = 0; i + 1 < path.size(); ++i) cur = &(*cur)[path[i]];
      (*cur)[path.back()] = v;
      const std::vector<FieldError> hand = api::ParseModelService(o).errors;
      bool schema_ok = Schema().Validate(o).empty();
      EXPECT_EQ(hand.empty(), schema_ok) << o.dump() << " hand: " << JoinErrors(hand);
      ++checked;
    }
  }
  EXPECT_EQ(checked, static_cast<int>(paths.size() * values.size()));
}

// Why ValidateModelService needs no schema: every violation valijson finds
// outside status is explained by an error of the typed parser (on the
// catalogue and on thousands of mutations of it that break each
// constraint).
TEST_F(ValidationTest, ParserErrorsCoverEverySchemaViolationButStatus) {
  const auto docs = test::Catalogue();
  const auto values = test::Values();
  std::mt19937 rng(2712);
  int checked = 0, violations = 0;
  auto check = [&](const json& doc) {
    const auto spec = doc.find("spec");
    if (spec == doc.end() || !spec->is_object()) return;
    const std::vector<FieldError> errors = ParseModelService(doc).errors;
    for (const auto& violation : Schema().Validate(doc)) {
      const std::string& path = violation.path;
      if (path == "status" || path.starts_with("status.") || path.starts_with("status[")) continue;
      ++violations;
      EXPECT_TRUE(std::any_of(errors.begin(), errors.end(), [&](const FieldError& e) { return ErrorCovers(e, path); }))
          << path << " in " << doc.dump() << "\nparser: " << JoinErrors(errors);
    }
    ++checked;
  };
  for (const auto& doc : docs) check(doc);
  for (int round = 0; round < 12000; ++round) check(test::Mutated(docs, values, rng));
  EXPECT_GT(checked, 12000);
  EXPECT_GT(violations, 3000) << "the mutations must break the schema inside spec";
}

// The status is not judged, even when it breaks the schema: the API server
// drops a create's status and keeps the stored one on an update before its
// validating webhooks see the object (e2e 34 creates one with a phase the
// schema does not know).
TEST_F(ValidationTest, StatusIsNotJudged) {
  json o = Valid();
  o["status"] = {{"replicas", "two"}, {"phase", "Happy"}, {"conditions", {{{"type", 1}}}}};
  EXPECT_EQ(Message(o), "");
  EXPECT_FALSE(Schema().Validate(o).empty()) << "the schema does judge it";
}

// Each kind of field error in the API server's words, alone and joined: the
// text a denial's message is made of.
TEST(FieldError, EveryKindWordedAsTheApiServerDoes) {
  const std::vector<FieldError> errors = {
      FieldError::Required("spec.model"),
      FieldError::Required("spec.x", "needed"),
      FieldError::Invalid("spec.replicas", json(0), "must be between 1 and 100"),
      FieldError::Invalid("spec.port", json("80"), ""),
      FieldError::Unsupported("spec.strategy.type", json("Blue"), {"Recreate", "RollingUpdate"}),
      FieldError::Forbidden("spec.strategy.rollingUpdate", "may not be specified"),
      FieldError::TooLong("spec.image", 512),
      FieldError::TooMany("spec.args", 300, 256),
      FieldError::Duplicate("spec.env[1].name", json("A")),
  };
  const std::vector<std::string> want = {
      "spec.model: Required value",
      "spec.x: Required value: needed",
      "spec.replicas: Invalid value: 0: must be between 1 and 100",
      "spec.port: Invalid value: \"80\"",
      "spec.strategy.type: Unsupported value: \"Blue\": supported values: \"Recreate\", \"RollingUpdate\"",
      "spec.strategy.rollingUpdate: Forbidden: may not be specified",
      "spec.image: Too long: may not be more than 512 bytes",
      "spec.args: Too many: 300: must have at most 256 items",
      "spec.env[1].name: Duplicate value: \"A\"",
  };
  ASSERT_EQ(errors.size(), want.size());
  std::string joined;
  for (size_t i = 0; i < errors.size(); ++i) {
    EXPECT_EQ(errors[i].ToString(), want[i]);
    std::string appended = "prefix ";
    errors[i].AppendTo(appended);
    EXPECT_EQ(appended, "prefix " + want[i]);
    joined += (i ? "; " : "") + want[i];
  }
  EXPECT_EQ(JoinErrors(errors), joined);
  EXPECT_EQ(JoinErrors({}), "");
}

// A denial's message lists at most kMaxListedErrors errors, each cut at
// kMaxErrorBytes (before a UTF-8 character, the marker included), then says
// how many more there are; fewer, shorter errors are joined whole.
TEST(FieldErrors, JoinListsABoundedNumberOfBoundedErrors) {
  std::vector<FieldError> errors;
  for (int i = 0; i < 100; ++i) errors.push_back(FieldError::Required("spec.f" + std::to_string(i)));
  std::string want;
  for (size_t i = 0; i < kMaxListedErrors; ++i)
    want += (i ? "; spec.f" : "spec.f") + std::to_string(i) + ": Required value";
  EXPECT_EQ(JoinErrors(errors), want + "; ... and 84 more errors");
  errors.resize(kMaxListedErrors + 1);
  EXPECT_EQ(JoinErrors(errors), want + "; ... and 1 more error");
  errors.resize(kMaxListedErrors);
  EXPECT_EQ(JoinErrors(errors), want);

  // A path of 5,000 bytes (a map's key, as the parser names an entry), with
  // a two-byte character where the cut falls: the cut goes before it.
  const std::string key = std::string(986, 'k') + "\xc3\xa9" + std::string(4012, 'k');
  const FieldError long_one = FieldError::Invalid("spec.nodeSelector[" + key + "]", json(1), "must be a string");
  const std::string joined = JoinErrors({long_one});
  EXPECT_LE(joined.size(), kMaxErrorBytes);
  EXPECT_EQ(joined, "spec.nodeSelector[" + std::string(986, 'k') + "...[cut " +
                        std::to_string(long_one.ToString().size() - 1004) + " bytes]");
  EXPECT_EQ(CutText("short", 5), "short");
}

}  // namespace
}  // namespace ms::api
