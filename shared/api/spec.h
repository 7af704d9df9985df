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
#include "shared/text/json_ref.h"

namespace ms::api {

struct ParsedModelService {
  ModelServiceSpec spec;
  // The single-field errors (type, range, length, format, required) in the
  // order of the fields in the definition, and the unknown fields of `spec`.
  std::vector<FieldError> errors;
  std::vector<std::string> warnings;
};

// Reads a ModelService object (apiVersion, kind, metadata are only type
// checked). Never throws.
ParsedModelService ParseModelService(text::JsonRef object);
// Reads the object's `spec` alone (which must be a JSON object).
ParsedModelService ParseSpec(text::JsonRef spec);

// The rule of spec.replicas (an integer in 1..100, errors worded as for the
// ModelService) applied to one value, e.g. the spec.replicas of a Scale.
std::optional<int64_t> ParseReplicas(text::JsonRef value, std::vector<FieldError>& errors);

}  // namespace ms::api
