// Validation of a ModelService object (design.md §2): the single-field rules
// that the schema also states (read by the typed spec's parser, worded as the
// API server words them), the cross-field rules and the warnings on the typed
// spec. Pure: no I/O.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "shared/api/field_error.h"
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

// All of the above: the parser's errors and unknown fields, the rules
// between fields, the warnings. What the parser does not read (status) is
// not judged: the API server drops a create's status and keeps the old one
// on an update of the object before its validating webhooks run (status is
// a subresource), and validates the rest against the CRD's schema itself
// first. Every violation of the schema in apiVersion, kind, metadata and
// spec is an error of the parser, generated from the same definition
// (tools/apigen refuses a keyword the parser does not enforce;
// validation_test holds it to valijson on the catalogue and on mutations).
ValidationOutcome ValidateModelService(text::JsonText json);
// ... of an object read already (the webhook's, in its pass over the review).
ValidationOutcome ValidateModelService(const ParsedModelService& parsed);
ValidationOutcome ValidateModelService(const nlohmann::json& object);

// A Scale (autoscaling/v1) of a ModelService, as the scale subresource
// admits it: its spec.replicas is the ModelService's (absent means 0, Go's
// omitempty), under the same rule. The autoscaling bounds are not in a Scale
// (see manifests/webhook/scale-policy.yaml).
ValidationOutcome ValidateScale(text::JsonText json);
ValidationOutcome ValidateScale(const nlohmann::json& scale);

}  // namespace ms::api
