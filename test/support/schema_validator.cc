#include "test/support/schema_validator.h"

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include <stdexcept>

namespace ms::test {

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

SchemaValidator::SchemaValidator(std::string_view schema_json)
    : schema_(std::make_unique<valijson::Schema>()),
      validator_(std::make_unique<valijson::Validator>(valijson::Validator::kStrongTypes)) {
  try {
    const nlohmann::json document = nlohmann::json::parse(schema_json);
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft4);
    valijson::adapters::NlohmannJsonAdapter adapter(document);
    parser.populateSchema(adapter, *schema_);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("cannot compile the schema: ") + e.what());
  }
}

SchemaValidator::~SchemaValidator() = default;

std::vector<SchemaError> SchemaValidator::Validate(const nlohmann::json& document) const {
  std::vector<SchemaError> out;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(document);
  {
    std::lock_guard<std::mutex> lock(mu_);
    validator_->validate(*schema_, target, &results);
  }
  valijson::ValidationResults::Error err;
  while (results.popError(err)) {
    if (err.description.rfind("Failed to validate against schema associated with property", 0) == 0) continue;
    if (err.description.rfind("Failed to validate item", 0) == 0) continue;
    out.push_back({ContextToPath(err.context), err.description});
  }
  return out;
}

}  // namespace ms::test
