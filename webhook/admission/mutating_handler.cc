#include "webhook/admission/mutating_handler.h"

#include "api/defaults.h"
#include "base/base64.h"

namespace ms::webhook {

using nlohmann::json;

json MutatingHandler::Handle(JsonRef request) const {
  if (auto early = Preflight(request)) return *early;
  if (IsScaleRequest(request)) return Allowed();  // a Scale has nothing to default
  const auto obj = request.find("object");

  const json patch = api::DefaultsPatch(*obj);
  json response = Allowed();
  if (!patch.empty()) {
    response["patchType"] = "JSONPatch";
    response["patch"] = Base64Encode(patch.dump());
  }
  return response;
}

}  // namespace ms::webhook
