#include "webhook/admission/mutating_handler.h"

#include "shared/api/defaults.h"

namespace ms::admission {

AdmissionResponse MutatingHandler::Handle(const AdmissionRequest& request) const {
  if (auto early = Preflight(request)) return *early;
  if (IsScaleRequest(request)) return Allowed();  // a Scale has nothing to default
  AdmissionResponse response = Allowed();
  response.patch = api::DefaultsPatchText(*request.model_service);  // "" when nothing is missing
  return response;
}

}  // namespace ms::admission
