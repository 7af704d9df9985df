#include "webhook/mutating_handler.h"

#include "shared/json_patch.h"
#include "shared/modelservice_defaults.h"

namespace ms::webhook {

using nlohmann::json;

json MutatingHandler::Handle(const json& request) const {
  const std::string op = StringField(request, "operation");
  if (op == "DELETE" || op == "CONNECT") return Allowed();
  if (auto err = CheckModelServiceRequest(request); !err.empty()) return Denied(400, "BadRequest", err);
  auto obj = request.find("object");
  if (obj == request.end() || !obj->is_object())
    return Denied(400, "BadRequest", "request.object is missing or not an object");

  jsonpatch::Patch patch = DefaultsPatch(*obj);
  json response = Allowed();
  if (!patch.empty()) {
    response["patchType"] = "JSONPatch";
    response["patch"] = jsonpatch::Base64Encode(patch.Dump());
  }
  return response;
}

}  // namespace ms::webhook
