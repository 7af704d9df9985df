// The ModelService schema compiled with valijson once per test binary
// (valijson compiles its regular expressions and subschemas: tens of
// milliseconds), the oracle the typed parser's errors are held to, and the
// validation of a spec built from a few fields.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "shared/api/field_error.h"
#include "shared/api/validation.h"
#include "test/support/schema_validator.h"

namespace ms::test {

inline const SchemaValidator& ModelServiceSchema() {
  static const SchemaValidator schema;
  return schema;
}

// A field path with map keys as valijson's paths name them:
// "spec.nodeSelector[pool]" -> "spec.nodeSelector.pool" (indices stay).
inline std::string SchemaPath(const std::string& path) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    const size_t close = path[i] == '[' ? path.find(']', i) : std::string::npos;
    if (close == std::string::npos) {
      out += path[i];
      continue;
    }
    const std::string inner = path.substr(i + 1, close - i - 1);
    const bool index = !inner.empty() && inner.find_first_not_of("0123456789") == std::string::npos;
    out += index ? "[" + inner + "]" : "." + inner;
    i = close;
  }
  return out;
}

// Whether `error` explains a violation valijson reports at `schema_path`:
// one path is the other or a field above it.
inline bool ErrorCovers(const api::FieldError& error, const std::string& schema_path) {
  const std::string a = SchemaPath(error.path);
  const std::string& b = schema_path;
  const std::string& shorter = a.size() <= b.size() ? a : b;
  const std::string& longer = a.size() <= b.size() ? b : a;
  if (shorter.empty() || shorter == "<root>") return true;
  if (longer.compare(0, shorter.size(), shorter) != 0) return false;
  return longer.size() == shorter.size() || longer[shorter.size()] == '.' || longer[shorter.size()] == '[';
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
