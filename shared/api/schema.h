// The ModelService JSON schema (shared/api/schema/modelservice.schema.json, the
// CRD's openAPIV3Schema), compiled once with valijson as draft 4.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace valijson {
class Schema;
class Validator;
}  // namespace valijson

namespace ms {

// The schema text embedded at build time.
extern const std::string_view kModelServiceSchemaJson;

struct SchemaError {
  std::string path;         // "spec.replicas", "" for the root
  std::string description;  // valijson's description
};

class SchemaValidator {
 public:
  // Throws std::runtime_error when the schema does not parse or compile.
  explicit SchemaValidator(std::string_view schema_json = kModelServiceSchemaJson);
  ~SchemaValidator();
  SchemaValidator(const SchemaValidator&) = delete;
  SchemaValidator& operator=(const SchemaValidator&) = delete;

  // Every violation (leaf errors only). Thread-safe: the compiled schema is
  // shared read-only; a valijson::Validator (which caches compiled regexes,
  // without a lock) is taken from a pool for the call and given back, so
  // patterns are compiled once per pooled validator, not per call. Callers
  // must bound string lengths first (std::regex recursion, see notes).
  std::vector<SchemaError> Validate(const nlohmann::json& document) const;

 private:
  struct ValidatorPool;
  std::unique_ptr<valijson::Schema> schema_;
  std::unique_ptr<ValidatorPool> pool_;
};

}  // namespace ms
