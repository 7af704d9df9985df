#include "shared/api/schema.h"

#include "shared/api/schema_check.h"

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include <mutex>
#include <stdexcept>
#include <vector>

namespace ms::api {

namespace {

// valijson context: {"<root>", "[spec]", "[replicas]"} -> "spec.replicas";
// array indices stay in brackets: "status.conditions[0]".
std::string ContextToPath(const std::vector<std::string>& context) {
  std::string path;
  for (const auto& c : context) {
    if (c == "<root>") continue;
    if (c.size() >= 2 && c.front() == '[' && c.back() == ']') {
      std::string inner = c.substr(1, c.size() - 2);
      bool index = !inner.empty() && inner.find_first_not_of("0123456789") == std::string::npos;
      if (index) {
        path += c;
      } else {
        if (!path.empty()) path += '.';
        path += inner;
      }
    } else {
      if (!path.empty()) path += '.';
      path += c;
    }
  }
  return path;
}

}  // namespace

struct SchemaValidator::ValidatorPool {
  std::mutex mu;
  std::vector<std::unique_ptr<valijson::Validator>> free;

  std::unique_ptr<valijson::Validator> Take() {
    {
      std::lock_guard<std::mutex> g(mu);
      if (!free.empty()) {
        auto v = std::move(free.back());
        free.pop_back();
        return v;
      }
    }
    return std::make_unique<valijson::Validator>(valijson::Validator::kStrongTypes);
  }
  void Give(std::unique_ptr<valijson::Validator> v) {
    std::lock_guard<std::mutex> g(mu);
    free.push_back(std::move(v));
  }
};

SchemaValidator::SchemaValidator(std::string_view schema_json)
    : schema_(std::make_unique<valijson::Schema>()),
      pool_(std::make_unique<ValidatorPool>()),
      compiled_(std::make_unique<CompiledSchema>(schema_json)) {
  try {
    const nlohmann::json document = nlohmann::json::parse(schema_json);
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft4);
    valijson::adapters::NlohmannJsonAdapter adapter(document);
    parser.populateSchema(adapter, *schema_);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("cannot compile the ModelService schema: ") + e.what());
  }
}

SchemaValidator::~SchemaValidator() = default;

std::vector<SchemaError> SchemaValidator::Validate(JsonRef document) const {
  std::vector<SchemaError> out;
  // valijson reads nlohmann's tree: a RapidJSON value is copied into one
  // (only here, to word a violation no hand-written check explains).
  std::optional<nlohmann::json> copy;
  if (!document.nlohmann_value()) copy = document.ToJson();
  auto validator = pool_->Take();
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(copy ? *copy : *document.nlohmann_value());
  try {
    validator->validate(*schema_, target, &results);
  } catch (const std::exception& e) {
    out.push_back({"", std::string("schema validation failed: ") + e.what()});
    return out;  // a validator that threw is dropped, not reused
  }
  pool_->Give(std::move(validator));
  valijson::ValidationResults::Error err;
  while (results.popError(err)) {
    if (err.description.rfind("Failed to validate against schema associated with property", 0) == 0) continue;
    if (err.description.rfind("Failed to validate item", 0) == 0) continue;
    out.push_back({ContextToPath(err.context), err.description});
  }
  return out;
}

std::optional<std::vector<std::string>> SchemaValidator::ViolationPaths(JsonRef document,
                                                                        std::string_view skipped) const {
  if (!compiled_->supported()) return std::nullopt;
  return compiled_->ViolationPaths(document, skipped);
}

}  // namespace ms::api
