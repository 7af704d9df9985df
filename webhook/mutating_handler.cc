#include "webhook/mutating_handler.h"

#include "shared/base64.h"
#include "shared/json_patch.h"
#include "shared/modelservice_defaults.h"

namespace ms::webhook {

using nlohmann::json;

json MutatingHandler::Handle(const json& request) const {
  if (auto early = Preflight(request)) return *early;
  const auto obj = request.find("object");

  jsonpatch::Patch patch = DefaultsPatch(*obj);
  json response = Allowed();
  if (!patch.empty()) {
    response["patchType"] = "JSONPatch";
    response["patch"] = Base64Encode(patch.Dump());
  }
  return response;
}

}  // namespace ms::webhook
