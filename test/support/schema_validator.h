// valijson over a JSON schema (draft 4, strong types): the tests' oracle for
// the typed parser, which must find every violation valijson finds (the
// production code does not run valijson: the parser is generated from the
// same definition and enforces every keyword of it).
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "shared/api/schema.h"

namespace valijson {
class Schema;
class Validator;
}  // namespace valijson

namespace ms::test {

struct SchemaError {
  std::string path;         // "spec.replicas", "status.conditions[0]", "" for the root
  std::string description;  // valijson's description
};

class SchemaValidator {
 public:
  // Throws std::runtime_error when the schema does not parse or compile.
  explicit SchemaValidator(std::string_view schema_json = api::kModelServiceSchemaJson);
  ~SchemaValidator();
  SchemaValidator(const SchemaValidator&) = delete;
  SchemaValidator& operator=(const SchemaValidator&) = delete;

  // Every violation (leaf errors only). Thread-safe (one validator, which
  // caches the compiled regular expressions, behind a lock).
  std::vector<SchemaError> Validate(const nlohmann::json& document) const;

 private:
  std::unique_ptr<valijson::Schema> schema_;
  mutable std::mutex mu_;
  std::unique_ptr<valijson::Validator> validator_;
};

}  // namespace ms::test
