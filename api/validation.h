// Validation of a ModelService object (design.md §2): the single-field rules
// that the schema also states, worded as the API server words them, the
// cross-field rules, and the warnings. Pure: no I/O.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "api/field_error.h"
#include "api/schema.h"

namespace ms {

struct ValidationOutcome {
  std::vector<FieldError> errors;
  std::vector<std::string> warnings;
  bool ok() const { return errors.empty(); }
};

// The single-field checks: the same constraints as the schema, with precise
// messages. (A test keeps them equivalent to the schema.)
void CheckFields(const nlohmann::json& object, std::vector<FieldError>& errors);
// The rules beyond single fields.
void CheckCrossFields(const nlohmann::json& object, std::vector<FieldError>& errors);
// Allowed-but-questionable: unknown spec fields, replicas outside the
// autoscaling range, GPUs with no image.
std::vector<std::string> Warnings(const nlohmann::json& object);

// All of the above, plus the compiled schema as a safety net: a schema
// violation that no hand-written check explains is still reported.
ValidationOutcome ValidateModelService(const nlohmann::json& object, const SchemaValidator& schema);

// Integer-or-percent helpers shared with the controller.
bool IsZeroIntOrPercent(const nlohmann::json& v);

}  // namespace ms
