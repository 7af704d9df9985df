// The ModelService schema compiled with valijson once per test binary
// (valijson compiles its regular expressions and subschemas: tens of
// milliseconds), the oracle the typed parser's errors are held to, and the
// validation of a spec built from a few fields.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "shared/api/validation.h"
#include "test/support/schema_validator.h"

namespace ms::test {

inline const SchemaValidator& ModelServiceSchema() {
  static const SchemaValidator schema;
  return schema;
}

// ValidateModelService of a ModelService "m" (spec.model "m") with `fields`
// set in its spec, and its errors joined as the webhook reports them.
inline api::ValidationOutcome ValidateSpecFields(const nlohmann::json& fields) {
  nlohmann::json o = {{"apiVersion", "modelops.dev/v1"},
                      {"kind", "ModelService"},
                      {"metadata", {{"name", "m"}}},
                      {"spec", {{"model", "m"}}}};
  for (const auto& [k, v] : fields.items()) o["spec"][k] = v;
  return api::ValidateModelService(o);
}
inline std::string SpecFieldErrors(const nlohmann::json& fields) {
  return api::JoinErrors(ValidateSpecFields(fields).errors);
}

}  // namespace ms::test
