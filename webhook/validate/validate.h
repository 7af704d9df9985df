// `modelservice-webhook validate`: the webhook's defaulting and validation
// offline, over manifest files (docs/design.md §2; docs/user/validate.md). Each
// modelops.dev/v1 ModelService document is defaulted as the
// mutating webhook would (DefaultedObject, whose difference is the webhook's
// patch) and validated as the validating webhook then would
// (ValidateModelService): the same functions the handlers call. Before
// that, as the API server does before admission, members the schema does
// not know are pruned (an error under kubectl's default strict field
// validation, a warning with --field-validation=warn) and null members are
// dropped (api/prune.h), so a verdict is what `kubectl apply` decides.
#pragma once

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "shared/api/field_error.h"

namespace ms::validate {

// How unknown fields count, as kubectl's --validate (the API server's
// fieldValidation): Strict (kubectl's default) rejects the document, Warn
// warns, Ignore says nothing; in every mode they are pruned before the
// webhook's rules run, as the API server prunes them.
enum class FieldValidation { kStrict, kWarn, kIgnore };

// One ModelService document.
struct DocumentResult {
  std::string file;
  std::string document;  // 1-based index in the file; "3.items[0]" inside a List
  int line = 0;          // where the document starts
  std::string name, ns;
  std::vector<api::FieldError> errors;
  std::vector<std::string> warnings;
  // Fields the schema does not know, under strict field validation (the API
  // server's "strict decoding error", before any admission).
  std::vector<std::string> unknown_fields;
  nlohmann::json defaulted;  // the object after the mutating webhook's patch
  bool valid() const { return errors.empty() && unknown_fields.empty(); }
};

// A document that is not a modelops.dev/v1 ModelService.
struct Skipped {
  std::string file, document, api_version, kind, name;
  // Worth a line in the reports: a ModelService of another version, or
  // another kind of the group.
  bool LookAlike() const;
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
  explicit Validator(FieldValidation fields = FieldValidation::kStrict) : fields_(fields) {}
  // Reads one stream of YAML or JSON documents named `file` into `report`.
  void AddStream(const std::string& file, std::string_view text, Report& report) const;
  // A file, or every *.yaml, *.yml and *.json under a directory (sorted).
  void AddPath(const std::string& path, Report& report) const;

 private:
  void AddDocument(const std::string& file, const std::string& index, int line, const nlohmann::json& doc,
                   Report& report) const;
  FieldValidation fields_;
};

// The API's reason of a field error ("FieldValueInvalid", ...), as a
// Status cause names it.
const char* Reason(api::FieldError::Type type);

// The text report: each error and warning on a line of its own,
// "FILE:DOC (NAME): MESSAGE", then skipped look-alikes and input errors.
void PrintText(const Report& report, std::ostream& out);
// The machine-readable report.
nlohmann::json ToJson(const Report& report, bool with_defaults);
// The report as JUnit XML for CI systems (junit.cc): a test suite per file,
// a test case per ModelService (a failure per invalid one), an error per
// unreadable input, skipped look-alikes.
void PrintJUnit(const Report& report, std::ostream& out);
// "N ModelServices in N files: N valid, N invalid; N other documents skipped".
std::string Summary(const Report& report);

// `validate ARGS...` (args after the word "validate"): returns the exit code.
int Main(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace ms::validate
