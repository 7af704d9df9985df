#include "webhook/admission/validating_handler.h"

#include "api/validation.h"

namespace ms::webhook {

AdmissionResponse ValidatingHandler::Handle(const AdmissionRequest& request) const {
  if (auto early = Preflight(request)) return *early;
  const auto& obj = request.object;

  api::ValidationOutcome outcome =
      IsScaleRequest(request) ? api::ValidateScale(*obj) : api::ValidateModelService(*obj, schema_);
  AdmissionResponse response = outcome.ok() ? Allowed() : Denied(422, "Invalid", api::JoinErrors(outcome.errors));
  response.warnings = std::move(outcome.warnings);
  LimitWarnings(response.warnings);
  return response;
}

}  // namespace ms::webhook
