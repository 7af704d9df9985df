// `modelservice-webhook validate`: every sample in manifests/samples/ gets the
// verdict, message and warnings the webhook gives it (the end-to-end suite's
// expectations, test/e2e/cases/10-samples-valid.sh and 11-samples-invalid.sh,
// and each file's `# expect:` line); the command line's output, formats and
// exit codes, through the real binary.
#include "webhook/validate/validate.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "shared/api/defaults.h"
#include "shared/process/files.h"
#include "test/support/test_support.h"
#include "webhook/admission/review.h"
#include "webhook/admission/validating_handler.h"
#include "webhook/validate/yaml_reader.h"

namespace ms::validate {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const std::string kSamples = std::string(MS_SOURCE_DIR) + "/manifests/samples";
const std::string kBinary = MS_WEBHOOK_BINARY;

std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The `# key: value` header line of a sample.
std::string Header(const std::string& file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("# " + key + ": ", 0) == 0) return line.substr(key.size() + 4);
  return {};
}

// What the webhook's /validate answers for the object, as the end-to-end
// suite posts it (the object as kubectl sends it, in an AdmissionReview).
json WebhookResponse(const json& object) {
  const admission::ValidatingHandler handler;
  json review = {{"apiVersion", "admission.k8s.io/v1"},
                 {"kind", "AdmissionReview"},
                 {"request",
                  {{"uid", "u"},
                   {"kind", {{"group", "modelops.dev"}, {"version", "v1"}, {"kind", "ModelService"}}},
                   {"resource", {{"group", "modelops.dev"}, {"version", "v1"}, {"resource", "modelservices"}}},
                   {"operation", "CREATE"},
                   {"object", object}}}};
  auto reply = admission::ServeReview(review.dump(), "application/json", handler);
  return json::parse(reply.body)["response"];
}

Report Validate(const std::string& path) {
  Report report;
  Validator().AddPath(path, report);
  return report;
}

TEST(Validate, ValidSamplesAsTheWebhookAllowsThem) {
  auto files = Files(kSamples);
  ASSERT_GE(files.size(), 4u);
  const auto runtimes = Files(kSamples + "/runtimes");  // one per model server (issue 43)
  ASSERT_EQ(runtimes.size(), 4u);
  files.insert(files.end(), runtimes.begin(), runtimes.end());
  for (const auto& f : files) {
    const Report report = Validate(f);
    ASSERT_EQ(report.results.size(), 1u) << f;
    const DocumentResult& r = report.results[0];
    EXPECT_EQ(Header(f, "expect"), "allowed") << f;
    EXPECT_TRUE(r.valid()) << f << ": " << api::JoinErrors(r.errors);
    const std::string warning = Header(f, "expect-warning");
    if (warning.empty()) {
      EXPECT_TRUE(r.warnings.empty()) << f << ": " << json(r.warnings).dump();
    } else {
      ASSERT_EQ(r.warnings.size(), 1u) << f;
      EXPECT_EQ(r.warnings[0].rfind(warning, 0), 0u) << r.warnings[0];
    }
    // The webhook's answer for the same object.
    const json resp = WebhookResponse(ReadYaml(process::ReadFile(f)).documents[0].value);
    EXPECT_EQ(resp["allowed"], true) << f;
    EXPECT_EQ(resp.value("warnings", json::array()), json(r.warnings)) << f;
    EXPECT_EQ(report.ExitCode(), 0);
  }
  // The defaults the end-to-end suite reads back from the API server.
  const Report minimal = Validate(kSamples + "/minimal.yaml");
  EXPECT_EQ(minimal.results[0].defaulted["spec"],
            json::parse(R"({"gpus":0,"model":"distilbert-base-uncased","port":8080,"replicas":1,"runtime":"Custom",
              "strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0},"type":"RollingUpdate"},
              "rollout":{"rollback":"Manual","timeoutSeconds":600}})"));
  EXPECT_EQ(Validate(kSamples + "/autoscaled.yaml").results[0].defaulted["spec"],
            json::parse(R"({"autoscaling":{"maxReplicas":10,"minReplicas":1,"mode":"Controller","targetQueueLength":5},
              "gpus":0,"image":"registry.local/serve:1.4","model":"gpt2","port":8080,"replicas":2,"runtime":"Custom",
              "strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0},"type":"RollingUpdate"},"version":"1",
              "rollout":{"rollback":"Manual","timeoutSeconds":600}})"));
}

TEST(Validate, InvalidSamplesWithTheWebhooksMessage) {
  const auto files = Files(kSamples + "/invalid");
  ASSERT_EQ(files.size(), 17u);  // as 11-samples-invalid.sh
  for (const auto& f : files) {
    const Report report = Validate(f);
    ASSERT_EQ(report.results.size(), 1u) << f;
    const DocumentResult& r = report.results[0];
    const std::string expect = Header(f, "expect");
    ASSERT_FALSE(expect.empty()) << f;
    // Each sample breaks exactly one rule: exactly the `# expect:` error.
    EXPECT_EQ(api::JoinErrors(r.errors), expect) << f;
    const json resp = WebhookResponse(ReadYaml(process::ReadFile(f)).documents[0].value);
    EXPECT_EQ(resp["allowed"], false) << f;
    EXPECT_EQ(resp["status"]["code"], 422) << f;
    EXPECT_EQ(resp["status"]["message"], api::JoinErrors(r.errors)) << f;
    EXPECT_EQ(report.ExitCode(), 1);
  }
}

TEST(Validate, PicksModelServicesOutOfStreamsAndLists) {
  Report report;
  Validator().AddStream("m.yaml", R"(apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
---
apiVersion: modelops.dev/v1
kind: ModelService
metadata: {name: a, namespace: team}
spec: {model: m, replicas: 0}
---
apiVersion: modelops.dev/v2
kind: ModelService
metadata: {name: future}
---
apiVersion: v1
kind: List
items:
- {apiVersion: modelops.dev/v1, kind: ModelService, metadata: {name: b}, spec: {model: m}}
- {apiVersion: v1, kind: Service, metadata: {name: s}}
)",
                        report);
  ASSERT_EQ(report.results.size(), 2u);
  EXPECT_EQ(report.results[0].document, "2");
  EXPECT_EQ(report.results[0].line, 5);
  EXPECT_EQ(report.results[0].name, "a");
  EXPECT_EQ(report.results[0].ns, "team");
  EXPECT_FALSE(report.results[0].valid());
  EXPECT_EQ(report.results[1].document, "4.items[0]");
  EXPECT_TRUE(report.results[1].valid());
  ASSERT_EQ(report.skipped.size(), 3u);
  EXPECT_EQ(report.skipped[1].api_version, "modelops.dev/v2");
  std::ostringstream text;
  PrintText(report, text);
  EXPECT_EQ(text.str(),
            "m.yaml:2 (a): spec.replicas: Invalid value: 0: must be between 1 and 100\n"
            "m.yaml:3 (future): skipped: apiVersion \"modelops.dev/v2\" kind \"ModelService\" is not "
            "modelops.dev/v1 ModelService\n");
  EXPECT_EQ(Summary(report), "2 ModelServices in 1 file: 1 valid, 1 invalid; 3 other documents skipped");
  EXPECT_EQ(report.ExitCode(), 1);
}

// The verdicts `kubectl apply` (default flags) gets from the API server:
// nulls are dropped before the webhook sees the object, unknown fields are
// refused by strict field validation (pruned, warned about or ignored under
// the other modes), and the status of a new object is not validated.
TEST(Validate, VerdictsAsKubectlApply) {
  auto run = [](const std::string& spec, FieldValidation mode = FieldValidation::kStrict) {
    Report report;
    Validator(mode).AddStream("f.yaml", "apiVersion: modelops.dev/v1\nkind: ModelService\nmetadata: {name: a}\n" + spec,
                              report);
    std::ostringstream text;
    PrintText(report, text);
    return std::pair{report.results.at(0), text.str()};
  };
  auto [nulls, nulls_text] = run("spec: {model: m, replicas: null, strategy: {type: null}}\n");
  EXPECT_TRUE(nulls.valid()) << nulls_text;
  EXPECT_EQ(nulls.defaulted["spec"]["replicas"], 1);
  EXPECT_EQ(nulls.defaulted["spec"]["strategy"]["type"], "RollingUpdate");

  const std::string unknown = "spec: {model: m, colour: red}\ncolour: blue\n";
  auto [strict, strict_text] = run(unknown);
  EXPECT_FALSE(strict.valid());
  EXPECT_EQ(strict_text,
            "f.yaml:1 (a): strict decoding error: unknown field \"colour\", unknown field \"spec.colour\"\n");
  EXPECT_EQ(strict.defaulted.contains("colour"), false);
  auto [warn, warn_text] = run(unknown, FieldValidation::kWarn);
  EXPECT_TRUE(warn.valid());
  EXPECT_EQ(warn_text,
            "f.yaml:1 (a): Warning: unknown field \"colour\"\nf.yaml:1 (a): Warning: unknown field \"spec.colour\"\n");
  auto [ignore, ignore_text] = run(unknown, FieldValidation::kIgnore);
  EXPECT_TRUE(ignore.valid());
  EXPECT_EQ(ignore_text, "");
  // The status of a new object is reset by the API server, not validated.
  EXPECT_TRUE(run("spec: {model: m}\nstatus: {phase: Happy}\n").first.valid());
  // Unknown fields and a field error: both reported.
  auto [both, both_text] = run("spec: {model: m, replicas: 0, colour: red}\n");
  EXPECT_EQ(both_text,
            "f.yaml:1 (a): strict decoding error: unknown field \"spec.colour\"\n"
            "f.yaml:1 (a): spec.replicas: Invalid value: 0: must be between 1 and 100\n");
}

// The real binary, as CI and a pre-commit hook run it.
class ValidateCommand : public ::testing::Test {
 protected:
  test::CommandResult Run(const std::string& args, const std::string& input = {}) {
    return test::Run(kBinary + " validate " + args, input);
  }
  test::TempDir dir_;
};

TEST_F(ValidateCommand, SamplesDirectoryTextOutputAndExitStatus) {
  auto r = Run(kSamples + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(kSamples + "/invalid/replicas-0.yaml:1 (invalid-replicas-0): spec.replicas: Invalid "
                                     "value: 0: must be between 1 and 100\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(kSamples + "/warning-gpu-no-image.yaml:1 (gpu-no-image): Warning: spec.gpus is 1 but "
                                     "spec.image is not set"),
            std::string::npos);
  const size_t valid = Files(kSamples).size() + Files(kSamples + "/runtimes").size(),
               invalid = Files(kSamples + "/invalid").size();
  EXPECT_NE(r.output.find(std::to_string(valid + invalid) + " ModelServices in " + std::to_string(valid + invalid) +
                          " files: " + std::to_string(valid) + " valid, " + std::to_string(invalid) +
                          " invalid; 0 other documents skipped"),
            std::string::npos)
      << r.output;
  // Only the valid ones: 0, the warning does not fail it.
  r = Run("-f " + kSamples + "/minimal.yaml -f " + kSamples + "/warning-gpu-no-image.yaml " + kSamples +
          "/autoscaled.yaml");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(ValidateCommand, JsonReportAndShowDefaults) {
  auto r = Run("-o json " + kSamples + "/invalid/no-model.yaml " + kSamples + "/minimal.yaml --show-defaults");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const json report = json::parse(r.output);
  EXPECT_EQ(report["valid"], false);
  EXPECT_EQ(report["summary"], json::parse(R"({"files":2,"modelServices":2,"valid":1,"invalid":1,"skipped":0,
                                               "inputErrors":0})"));
  EXPECT_EQ(
      report["results"][0]["errors"],
      json::parse(R"([{"field":"spec.model","reason":"FieldValueRequired","message":"spec.model: Required value"}])"));
  EXPECT_EQ(report["results"][1]["defaulted"]["spec"]["replicas"], 1);

  // YAML on stdout (findings on stderr), read back as the defaulted objects.
  const std::string yaml = dir_.File("defaults.yaml");
  r = Run("--show-defaults -f - > " + yaml, process::ReadFile(kSamples + "/minimal.yaml"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  auto docs = ReadYaml(process::ReadFile(yaml));
  ASSERT_FALSE(docs.error);
  ASSERT_EQ(docs.documents.size(), 1u);
  EXPECT_EQ(docs.documents[0].value,
            api::DefaultedObject(ReadYaml(process::ReadFile(kSamples + "/minimal.yaml")).documents[0].value));
  EXPECT_NE(process::ReadFile(yaml).find("      maxSurge: 25%\n"), std::string::npos);
}

TEST_F(ValidateCommand, JUnitReportAndFieldValidationFlag) {
  test::WriteFile(dir_.File("a.yaml"), R"(apiVersion: modelops.dev/v1
kind: ModelService
metadata: {name: ok}
spec: {model: m, gpus: 1}
---
apiVersion: modelops.dev/v1
kind: ModelService
metadata: {name: bad}
spec: {model: m, replicas: 0, port: 0}
---
apiVersion: modelops.dev/v2
kind: ModelService
metadata: {name: later}
)");
  test::WriteFile(dir_.File("b.yaml"),
                  "apiVersion: modelops.dev/v1\nkind: ModelService\nmetadata: {name: x}\n"
                  "spec: {model: m, colour: \"<red & blue>\"}\n");
  // (standard output alone: the summary goes to standard error)
  auto r = test::Run("(" + kBinary + " validate -o junit " + dir_.File("a.yaml") + " " + dir_.File("b.yaml") +
                     " 2>/dev/null)");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string a = dir_.File("a.yaml"), b = dir_.File("b.yaml");
  EXPECT_EQ(
      r.output,
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"modelservice-webhook validate\" tests=\"4\" failures=\"2\" errors=\"0\">\n"
      "  <testsuite name=\"" +
          a +
          "\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\">\n"
          "    <testcase classname=\"" +
          a +
          "\" name=\"1 (ok)\">\n"
          "      <system-out>Warning: spec.gpus is 1 but spec.image is not set: the controller&apos;s --default-image "
          "will be used; make sure it supports GPUs\n</system-out>\n"
          "    </testcase>\n"
          "    <testcase classname=\"" +
          a +
          "\" name=\"2 (bad)\">\n"
          "      <failure message=\"spec.replicas: Invalid value: 0: must be between 1 and 100\" "
          "type=\"FieldValueInvalid\">spec.replicas: Invalid value: 0: must be between 1 and 100\n"
          "spec.port: Invalid value: 0: must be between 1 and 65535\n</failure>\n"
          "    </testcase>\n"
          "    <testcase classname=\"" +
          a +
          "\" name=\"3 (later)\">\n"
          "      <skipped message=\"apiVersion &quot;modelops.dev/v2&quot; kind &quot;ModelService&quot; is not "
          "modelops.dev/v1 ModelService\"/>\n"
          "    </testcase>\n"
          "  </testsuite>\n"
          "  <testsuite name=\"" +
          b +
          "\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\">\n"
          "    <testcase classname=\"" +
          b +
          "\" name=\"1 (x)\">\n"
          "      <failure message=\"strict decoding error: unknown field &quot;spec.colour&quot;\" "
          "type=\"UnknownField\">strict decoding error: unknown field &quot;spec.colour&quot;\n</failure>\n"
          "    </testcase>\n"
          "  </testsuite>\n"
          "</testsuites>\n");
  // kubectl's --validate=warn: the unknown field is a warning, the document valid.
  r = Run("--field-validation=warn " + b + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(b + ":1 (x): Warning: unknown field \"spec.colour\"\n"), std::string::npos) << r.output;
  r = test::Run("(" + kBinary + " validate --field-validation ignore " + b + " 2>/dev/null)");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "");
  r = Run("-o json " + b);
  EXPECT_EQ(json::parse(r.output)["results"][0]["errors"],
            json::parse(R"([{"field":"spec.colour","reason":"UnknownField",
                             "message":"strict decoding error: unknown field \"spec.colour\""}])"));
  r = Run("--field-validation=lenient " + b + " 2>&1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("Error: --field-validation must be strict, warn or ignore, not \"lenient\""),
            std::string::npos)
      << r.output;
}

TEST_F(ValidateCommand, UnreadableInputAndUsage) {
  test::WriteFile(dir_.File("bad.yaml"), "apiVersion: modelops.dev/v1\nkind: ModelService\nspec: [1, 2\n");
  auto r = Run(dir_.File("bad.yaml") + " 2>&1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find(dir_.File("bad.yaml") + ": error: line 4, column 1: "), std::string::npos) << r.output;
  r = Run(dir_.File("missing.yaml") + " 2>&1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("missing.yaml: error: cannot read " + dir_.File("missing.yaml")), std::string::npos)
      << r.output;
  // Bytes that are not YAML at all: an error, never a crash.
  test::WriteFile(dir_.File("binary.yaml"), std::string("\x7f"
                                                        "ELF\x02\x01\x01\x00",
                                                        8));
  EXPECT_EQ(Run(dir_.File("binary.yaml")).exit_code, 2);
  for (const char* usage : {"", "--output yaml x", "-f", "--nope x", "- -"}) {
    r = Run(std::string(usage) + " 2>&1 < /dev/null");
    EXPECT_EQ(r.exit_code, 2) << usage << ": " << r.output;
    EXPECT_NE(r.output.find("Error: "), std::string::npos) << r.output;
  }
  r = Run("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("Usage: modelservice-webhook validate"), std::string::npos);
  // A stream without ModelServices is fine.
  r = Run("- 2>&1", "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("0 ModelServices in 1 file: 0 valid, 0 invalid; 1 other documents skipped"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace ms::validate
