#include "webhook/validating_handler.h"

#include "shared/modelservice_validation.h"

namespace ms::webhook {

using nlohmann::json;

json ValidatingHandler::Handle(const json& request) const {
  const std::string op = StringField(request, "operation");
  if (op == "DELETE" || op == "CONNECT") return Allowed();
  if (auto err = CheckModelServiceRequest(request); !err.empty()) return Denied(400, "BadRequest", err);
  auto obj = request.find("object");
  if (obj == request.end() || !obj->is_object())
    return Denied(400, "BadRequest", "request.object is missing or not an object");

  ValidationOutcome outcome = ValidateModelService(*obj, schema_);
  json response = outcome.ok() ? Allowed() : Denied(422, "Invalid", JoinErrors(outcome.errors));
  if (!outcome.warnings.empty()) response["warnings"] = outcome.warnings;
  return response;
}

}  // namespace ms::webhook
