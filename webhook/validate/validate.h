// `modelservice-webhook validate`: the webhook's defaulting and validation
// offline, over manifest files (design.md §2; README "Validating manifests
// offline"). Each modelops.dev/v1 ModelService document is defaulted as the
// mutating webhook would (DefaultedObject, whose difference is the webhook's
// patch) and validated as the validating webhook then would
// (ValidateModelService): the same functions the handlers call.
#pragma once

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_error.h"
#include "api/schema.h"

namespace ms::validate {

// One ModelService document.
struct DocumentResult {
  std::string file;
  std::string document;  // 1-based index in the file; "3.items[0]" inside a List
  int line = 0;          // where the document starts
  std::string name, ns;
  std::vector<api::FieldError> errors;
  std::vector<std::string> warnings;
  nlohmann::json defaulted;  // the object after the mutating webhook's patch
  bool valid() const { return errors.empty(); }
};

// A document that is not a modelops.dev/v1 ModelService.
struct Skipped {
  std::string file, document, api_version, kind, name;
};

struct InputError {
  std::string file, message;
};

struct Report {
  size_t files = 0;
  std::vector<DocumentResult> results;
  std::vector<Skipped> skipped;
  std::vector<InputError> input_errors;
  size_t invalid() const;
  // 0: every ModelService valid; 1: some invalid; 2: some input unreadable.
  int ExitCode() const;
};

class Validator {
 public:
  explicit Validator(const api::SchemaValidator& schema) : schema_(schema) {}
  // Reads one stream of YAML or JSON documents named `file` into `report`.
  void AddStream(const std::string& file, std::string_view text, Report& report) const;
  // A file, or every *.yaml, *.yml and *.json under a directory (sorted).
  void AddPath(const std::string& path, Report& report) const;

 private:
  void AddDocument(const std::string& file, const std::string& index, int line, const nlohmann::json& doc,
                   Report& report) const;
  const api::SchemaValidator& schema_;
};

// The text report: each error and warning on a line of its own,
// "FILE:DOC (NAME): MESSAGE", then skipped look-alikes and input errors.
void PrintText(const Report& report, std::ostream& out);
// The machine-readable report.
nlohmann::json ToJson(const Report& report, bool with_defaults);
// "N ModelServices in N files: N valid, N invalid; N other documents skipped".
std::string Summary(const Report& report);

// `validate ARGS...` (args after the word "validate"): returns the exit code.
int Main(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace ms::validate
