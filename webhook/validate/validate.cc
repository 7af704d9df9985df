#include "webhook/validate/validate.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>

#include "shared/api/defaults.h"
#include "shared/api/prune.h"
#include "shared/api/types.h"
#include "shared/api/validation.h"
#include "shared/process/files.h"
#include "shared/text/json_fields.h"
#include "webhook/validate/yaml_reader.h"
#include "webhook/validate/yaml_writer.h"

namespace ms::validate {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr const char* kUsage =
    "Usage: modelservice-webhook validate [-f FILE|DIR|-]... [FILE|DIR]... [--show-defaults] [-o text|json|junit]\n"
    "                                     [--field-validation strict|warn|ignore]\n"
    "\n"
    "Checks modelops.dev/v1 ModelService manifests offline with the webhook's own rules: each\n"
    "ModelService document is defaulted as the mutating webhook would, then validated as the\n"
    "validating webhook would, after what the API server does first: fields its schema does not know\n"
    "are pruned (an error by default, as kubectl apply's strict field validation) and null fields are\n"
    "dropped. So each verdict is the one `kubectl apply` gets. Reads YAML or JSON, several documents\n"
    "per file, every *.yaml, *.yml and *.json under a directory, and standard input for \"-\". Other\n"
    "documents are skipped and counted.\n"
    "\n"
    "  -f, --filename FILE|DIR|-  input (repeatable; plain arguments are inputs too)\n"
    "      --show-defaults        print the defaulted documents as YAML on standard output\n"
    "                             (findings then go to standard error)\n"
    "  -o, --output text|json|junit\n"
    "                             text: one line per error and warning, \"FILE:DOC (NAME): MESSAGE\";\n"
    "                             json: a report for CI (with \"defaulted\" under --show-defaults);\n"
    "                             junit: JUnit XML, a test case per ModelService\n"
    "      --field-validation strict|warn|ignore\n"
    "                             unknown fields: strict (default, as kubectl apply) makes the document\n"
    "                             invalid, warn (kubectl apply --validate=warn) a warning, ignore nothing\n"
    "  -h, --help                 this text\n"
    "\n"
    "Exit status: 0 every ModelService is valid, 1 some are invalid, 2 bad usage or unreadable input\n"
    "(a file that cannot be read or is not valid YAML).\n";

std::string Label(const std::string& file, const std::string& document, const std::string& name) {
  return file + ":" + document + " (" + (name.empty() ? "no metadata.name" : name) + ")";
}

}  // namespace

const char* Reason(api::FieldError::Type type) {
  switch (type) {
    case api::FieldError::Type::kRequired:
      return "FieldValueRequired";
    case api::FieldError::Type::kInvalid:
      return "FieldValueInvalid";
    case api::FieldError::Type::kUnsupported:
      return "FieldValueNotSupported";
    case api::FieldError::Type::kForbidden:
      return "FieldValueForbidden";
    case api::FieldError::Type::kTooLong:
      return "FieldValueTooLong";
    case api::FieldError::Type::kTooMany:
      return "FieldValueTooMany";
    case api::FieldError::Type::kDuplicate:
      return "FieldValueDuplicate";
  }
  return "FieldValueInvalid";
}

namespace {

bool IsManifest(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

std::string Dump(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

bool Skipped::LookAlike() const { return kind == api::kKind || api::InGroup(api_version); }

size_t Report::invalid() const {
  return static_cast<size_t>(std::count_if(results.begin(), results.end(), [](const auto& r) { return !r.valid(); }));
}

int Report::ExitCode() const {
  if (!input_errors.empty()) return 2;
  return invalid() > 0 ? 1 : 0;
}

void Validator::AddDocument(const std::string& file, const std::string& index, int line, const json& doc,
                            Report& report) const {
  if (doc.is_null()) return;  // an empty document
  const std::string api_version = text::StringField(doc, "apiVersion"), kind = text::StringField(doc, "kind");
  const std::string name = text::StringField(doc.is_object() ? doc.value("metadata", json()) : json(), "name");
  if (api_version == "v1" && kind == "List" && doc.contains("items") && doc["items"].is_array()) {
    const json& items = doc["items"];
    for (size_t i = 0; i < items.size(); ++i)
      AddDocument(file, index + ".items[" + std::to_string(i) + "]", line, items[i], report);
    return;
  }
  if (api_version != api::kApiVersion || kind != api::kKind) {
    report.skipped.push_back({file, index, api_version, kind, name});
    return;
  }
  // What the API server does with the object: the mutating webhook's patch
  // (DefaultedObject is what it produces), then the validating webhook.
  DocumentResult r;
  r.file = file;
  r.document = index;
  r.line = line;
  r.name = name;
  r.ns = text::StringField(doc.value("metadata", json()), "namespace");
  // Before admission the API server prunes unknown fields (refusing the
  // object under strict field validation), drops nulls, and on create
  // resets the status.
  json object = doc;
  std::vector<std::string> unknown = api::PruneUnknownFields(object);
  api::DropNulls(object);
  if (object.is_object()) object.erase("status");
  if (fields_ == FieldValidation::kStrict) r.unknown_fields = unknown;
  r.defaulted = api::DefaultedObject(object);
  api::ValidationOutcome outcome = api::ValidateModelService(r.defaulted);
  r.errors = std::move(outcome.errors);
  if (fields_ == FieldValidation::kWarn)
    for (const auto& f : unknown) r.warnings.push_back("unknown field \"" + f + "\"");
  for (auto& w : outcome.warnings) r.warnings.push_back(std::move(w));
  report.results.push_back(std::move(r));
}

void Validator::AddStream(const std::string& file, std::string_view text, Report& report) const {
  ++report.files;
  YamlReadResult read = ReadYaml(text);
  for (size_t i = 0; i < read.documents.size(); ++i)
    AddDocument(file, std::to_string(i + 1), read.documents[i].line, read.documents[i].value, report);
  if (read.error) report.input_errors.push_back({file, *read.error});
}

void Validator::AddPath(const std::string& path, Report& report) const {
  std::error_code ec;
  std::vector<std::string> files;
  if (fs::is_directory(path, ec)) {
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec) && IsManifest(it->path())) files.push_back(it->path().string());
    }
    if (ec) report.input_errors.push_back({path, "cannot list the directory: " + ec.message()});
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  for (const auto& f : files) {
    std::string text;
    try {
      text = process::ReadFile(f);
    } catch (const std::exception& e) {
      report.input_errors.push_back({f, e.what()});
      continue;
    }
    AddStream(f, text, report);
  }
}

void PrintText(const Report& report, std::ostream& out) {
  for (const auto& r : report.results) {
    const std::string label = Label(r.file, r.document, r.name);
    if (!r.unknown_fields.empty()) out << label << ": " << api::StrictDecodingError(r.unknown_fields) << "\n";
    for (const auto& e : r.errors) out << label << ": " << e.ToString() << "\n";
    for (const auto& w : r.warnings) out << label << ": Warning: " << w << "\n";
  }
  for (const auto& s : report.skipped) {
    if (s.LookAlike())
      out << Label(s.file, s.document, s.name) << ": skipped: apiVersion \"" << s.api_version << "\" kind \"" << s.kind
          << "\" is not " << api::kApiVersion << " " << api::kKind << "\n";
  }
  for (const auto& e : report.input_errors) out << e.file << ": error: " << e.message << "\n";
}

json ToJson(const Report& report, bool with_defaults) {
  json results = json::array();
  for (const auto& r : report.results) {
    json errors = json::array();
    for (const auto& f : r.unknown_fields)
      errors.push_back({{"field", f}, {"reason", "UnknownField"}, {"message", api::StrictDecodingError({f})}});
    for (const auto& e : r.errors)
      errors.push_back({{"field", e.path}, {"reason", Reason(e.type)}, {"message", e.ToString()}});
    json item = {{"file", r.file},    {"document", r.document}, {"line", r.line},   {"name", r.name},
                 {"namespace", r.ns}, {"valid", r.valid()},     {"errors", errors}, {"warnings", r.warnings}};
    if (with_defaults) item["defaulted"] = r.defaulted;
    results.push_back(std::move(item));
  }
  json skipped = json::array();
  for (const auto& s : report.skipped)
    skipped.push_back({{"file", s.file},
                       {"document", s.document},
                       {"apiVersion", s.api_version},
                       {"kind", s.kind},
                       {"name", s.name}});
  json input_errors = json::array();
  for (const auto& e : report.input_errors) input_errors.push_back({{"file", e.file}, {"message", e.message}});
  const size_t invalid = report.invalid();
  return {{"valid", report.ExitCode() == 0},
          {"summary",
           {{"files", report.files},
            {"modelServices", report.results.size()},
            {"valid", report.results.size() - invalid},
            {"invalid", invalid},
            {"skipped", report.skipped.size()},
            {"inputErrors", report.input_errors.size()}}},
          {"results", results},
          {"skipped", skipped},
          {"inputErrors", input_errors}};
}

std::string Summary(const Report& report) {
  const size_t n = report.results.size(), invalid = report.invalid();
  std::string s = std::to_string(n) + (n == 1 ? " ModelService" : " ModelServices") + " in " +
                  std::to_string(report.files) + (report.files == 1 ? " file" : " files") + ": " +
                  std::to_string(n - invalid) + " valid, " + std::to_string(invalid) + " invalid; " +
                  std::to_string(report.skipped.size()) + " other documents skipped";
  if (!report.input_errors.empty()) s += "; " + std::to_string(report.input_errors.size()) + " unreadable";
  return s;
}

namespace {

enum class Output { kText, kJson, kJUnit };

struct Options {
  std::vector<std::string> inputs;
  bool show_defaults = false;
  Output output = Output::kText;
  FieldValidation fields = FieldValidation::kStrict;
};

// kubectl's spellings of --validate: strict (and true), warn, ignore (and false).
std::optional<FieldValidation> ParseFieldValidation(std::string v) {
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  if (v == "strict" || v == "true") return FieldValidation::kStrict;
  if (v == "warn") return FieldValidation::kWarn;
  if (v == "ignore" || v == "false") return FieldValidation::kIgnore;
  return std::nullopt;
}

// The command line (kubectl's forms: -f/--filename repeated, files as
// arguments, -o/--output): an exit status when done (--help: 0, a usage
// error: 2), else nothing with `options` set.
std::optional<int> ParseArgs(const std::vector<std::string>& args, Options& options, std::ostream& out,
                             std::ostream& err) {
  auto usage_error = [&](const std::string& what) {
    err << "Error: " << what << "\nSee 'modelservice-webhook validate --help'.\n";
    return 2;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& flag, std::string* v) {
      if (a.size() > flag.size() && a.compare(0, flag.size() + 1, flag + "=") == 0) {
        *v = a.substr(flag.size() + 1);
        return true;
      }
      if (a != flag) return false;
      if (i + 1 >= args.size()) return false;
      *v = args[++i];
      return true;
    };
    std::string v;
    if (a == "-h" || a == "--help") {
      out << kUsage;
      return 0;
    } else if (a == "--show-defaults") {
      options.show_defaults = true;
    } else if (value("-f", &v) || value("--filename", &v)) {
      options.inputs.push_back(v);
    } else if (value("-o", &v) || value("--output", &v)) {
      if (v != "text" && v != "json" && v != "junit")
        return usage_error("--output must be text, json or junit, not \"" + v + "\"");
      options.output = v == "json" ? Output::kJson : v == "junit" ? Output::kJUnit : Output::kText;
    } else if (value("--field-validation", &v)) {
      const auto mode = ParseFieldValidation(v);
      if (!mode) return usage_error("--field-validation must be strict, warn or ignore, not \"" + v + "\"");
      options.fields = *mode;
    } else if (a == "-f" || a == "--filename" || a == "-o" || a == "--output" || a == "--field-validation") {
      return usage_error(a + " needs a value");
    } else if (a.size() > 1 && a[0] == '-') {
      return usage_error("unknown flag " + a);
    } else {
      options.inputs.push_back(a);
    }
  }
  if (options.inputs.empty()) return usage_error("no input: give files, directories or - (standard input) with -f");
  if (std::count(options.inputs.begin(), options.inputs.end(), "-") > 1)
    return usage_error("- (standard input) may be given once");
  return std::nullopt;
}

}  // namespace

int Main(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err) {
  Options options;
  if (auto done = ParseArgs(args, options, out, err)) return *done;

  const Validator validator(options.fields);
  Report report;
  for (const auto& input : options.inputs) {
    if (input == "-") {
      const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      validator.AddStream("<stdin>", text, report);
    } else {
      validator.AddPath(input, report);
    }
  }

  if (options.output == Output::kJson) {
    out << Dump(ToJson(report, options.show_defaults)) << "\n";
  } else if (options.output == Output::kJUnit) {
    PrintJUnit(report, out);
    err << Summary(report) << "\n";
  } else if (options.show_defaults) {
    for (size_t i = 0; i < report.results.size(); ++i) out << (i ? "---\n" : "") << ToYaml(report.results[i].defaulted);
    PrintText(report, err);
    err << Summary(report) << "\n";
  } else {
    PrintText(report, out);
    err << Summary(report) << "\n";
  }
  return report.ExitCode();
}

}  // namespace ms::validate
