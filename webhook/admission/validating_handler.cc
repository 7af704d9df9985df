#include "webhook/admission/validating_handler.h"

#include "shared/api/ratchet.h"
#include "shared/api/validation.h"

namespace ms::admission {

AdmissionResponse ValidatingHandler::Handle(const AdmissionRequest& request) const {
  if (auto early = Preflight(request)) return *early;
  const auto& obj = request.object;

  const bool scale = IsScaleRequest(request);
  api::ValidationOutcome outcome = scale ? api::ValidateScale(*obj) : api::ValidateModelService(*obj);
  // An UPDATE reports only the errors about values it changed (ratchet.h);
  // a Scale has one value, whose unchanged form Preflight already allows.
  if (!outcome.ok() && !scale && IsUpdateOf(request)) api::RatchetErrors(outcome.errors, *obj, *request.old_object);
  AdmissionResponse response = outcome.ok() ? Allowed() : Denied(422, "Invalid", api::JoinErrors(outcome.errors));
  response.warnings = std::move(outcome.warnings);
  LimitWarnings(response.warnings);
  return response;
}

}  // namespace ms::admission
