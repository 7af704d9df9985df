// Validation of a ModelService object (design.md §2): the single-field rules
// that the schema also states (read by the typed spec's parser, worded as the
// API server words them), the cross-field rules and the warnings on the typed
// spec, and the compiled schema as a safety net. Pure: no I/O.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "shared/api/field_error.h"
#include "shared/api/schema.h"
#include "shared/api/spec.h"

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

// Whether `error` explains a schema violation at `schema_path` (a path in
// SchemaError::path's form): one path is the other or a field above it.
bool ErrorCovers(const FieldError& error, const std::string& schema_path);

// All of the above, plus the schema over what the typed parser does not
// read (status): a violation there that no error above explains is still
// reported, in valijson's words. Everywhere else (the root's apiVersion,
// kind and metadata, and spec) every violation of the schema is explained by
// an error of the parser, generated from the same definition (tools/apigen
// refuses a keyword the parser does not enforce; validation_test checks it
// on the catalogue and on mutations), so the schema is not walked there.
ValidationOutcome ValidateModelService(JsonRef object, const SchemaValidator& schema);

// A Scale (autoscaling/v1) of a ModelService, as the scale subresource
// admits it: its spec.replicas is the ModelService's (absent means 0, Go's
// omitempty), under the same rule. The autoscaling bounds are not in a Scale
// (see manifests/webhook/scale-policy.yaml).
ValidationOutcome ValidateScale(JsonRef scale);

}  // namespace ms::api
