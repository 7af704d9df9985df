#include "webhook/admission/validating_handler.h"

#include "api/validation.h"

namespace ms::webhook {

using nlohmann::json;

json ValidatingHandler::Handle(const json& request) const {
  if (auto early = Preflight(request)) return *early;
  const auto obj = request.find("object");

  ValidationOutcome outcome = IsScaleRequest(request) ? ValidateScale(*obj) : ValidateModelService(*obj, schema_);
  json response = outcome.ok() ? Allowed() : Denied(422, "Invalid", JoinErrors(outcome.errors));
  if (!outcome.warnings.empty()) response["warnings"] = outcome.warnings;
  return response;
}

}  // namespace ms::webhook
