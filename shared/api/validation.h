// Validation of a ModelService object (design.md §2): the single-field rules
// that the schema also states (read by the typed spec's parser, worded as the
// API server words them), the cross-field rules and the warnings on the typed
// spec, and the compiled schema as a safety net. Pure: no I/O.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "api/field_error.h"
#include "api/schema.h"
#include "api/spec.h"

namespace ms::api {

struct ValidationOutcome {
  std::vector<FieldError> errors;
  std::vector<std::string> warnings;
  bool ok() const { return errors.empty(); }
};

// The rules beyond single fields.
void CheckCrossFields(const ModelServiceSpec& spec, std::vector<FieldError>& errors);
// Allowed-but-questionable: replicas outside the autoscaling range, GPUs with
// no image (unknown fields are warned about by the parser).
void AddWarnings(const ModelServiceSpec& spec, std::vector<std::string>& warnings);

// All of the above, plus the compiled schema as a safety net: a schema
// violation that no hand-written check explains is still reported.
ValidationOutcome ValidateModelService(JsonRef object, const SchemaValidator& schema);

// A Scale (autoscaling/v1) of a ModelService, as the scale subresource
// admits it: its spec.replicas is the ModelService's (absent means 0, Go's
// omitempty), under the same rule. The autoscaling bounds are not in a Scale
// (see manifests/webhook/scale-policy.yaml).
ValidationOutcome ValidateScale(JsonRef scale);

}  // namespace ms::api
