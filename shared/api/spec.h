// The ModelService spec as a typed value, the one both
// programs use: the webhook validates and defaults it, the controller builds
// its desired state from it. The types, each field's rule and the parser of
// each object are generated from the definition (spec.gen.h, by
// tools/gen-api.py); here are the entry points. ParseModelService reports
// every single-field error in the API server's wording; Defaulted() is the
// only place the defaults are applied. Small (no JSON inside), so a cache can
// keep one per object.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shared/api/field_error.h"
#include "shared/api/spec.gen.h"
#include "shared/api/value_text.h"
#include "shared/text/json_reader.h"

namespace ms::api {

struct ParsedModelService {
  // Whether the text is a JSON object, and what its spec is.
  bool object = false;
  enum class Spec { kAbsent, kObject, kOther } spec_form = Spec::kAbsent;
  ModelServiceSpec spec;
  // The single-field errors (type, range, length, format, required) in the
  // order of the fields in the definition, and the unknown fields of `spec`.
  std::vector<FieldError> errors;
  std::vector<std::string> warnings;
  // The members around the spec as their JSON text, as read (not decoded:
  // views into the reader's buffer): apiVersion, kind, metadata.name and
  // metadata.generateName; and where the spec's text lies (offsets from
  // the object's first byte), for a copy of the text taken before the read.
  std::optional<std::string_view> api_version, kind, name, generate_name;
  size_t spec_begin = 0, spec_end = 0;
};

// The deepest a ModelService's JSON may nest (the webhook's bound on a
// whole review): deeper text is reported, not read.
inline constexpr int kMaxObjectDepth = 64;

// Reads a ModelService object, the reader's next value, in one pass (the
// webhook: in its pass over the review). On a reader that fails (the text
// is not JSON there, or nests too deep) it stops, reporting nothing more.
ParsedModelService ReadModelService(text::JsonReader& in);

// Reads a ModelService object from its JSON text in one pass of the pull
// reader (apiVersion, kind, metadata are only type checked). Text that is
// not JSON is reported as an error at "<root>". Never throws.
ParsedModelService ParseModelService(text::JsonText json);
// ... from nlohmann's tree (the controller's cache, `validate`): its text.
ParsedModelService ParseModelService(const nlohmann::json& object);
// Reads a `spec` object alone.
ParsedModelService ParseSpec(const nlohmann::json& spec);

// The rule of spec.replicas (an integer in 1..100, errors worded as for the
// ModelService) applied to the next value of `in`, e.g. the spec.replicas
// of a Scale.
std::optional<int64_t> ParseReplicas(text::JsonReader& in, std::vector<FieldError>& errors);

}  // namespace ms::api
