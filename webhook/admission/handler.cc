#include "webhook/admission/handler.h"

#include "api/types.h"
#include "base/json_fields.h"

namespace ms::webhook {

bool IsScaleRequest(JsonRef request) {
  if (StringField(request, "subResource") != "scale") return false;
  auto resource = request.find("resource");
  if (!resource) return false;
  return StringField(*resource, "group") == api::kGroup && StringField(*resource, "resource") == api::kPlural;
}

std::string CheckModelServiceRequest(JsonRef request) {
  if (IsScaleRequest(request)) {
    auto kind = request.find("kind");
    if (!kind || StringField(*kind, "group") != "autoscaling" || StringField(*kind, "kind") != "Scale")
      return "the scale subresource of a ModelService is admitted as an autoscaling Scale only";
    auto obj = request.find("object");
    if (obj && obj->is_object() && StringField(*obj, "kind") != "Scale") {
      auto k = obj->find("kind");
      return "request.object is not a Scale (kind " + (k ? k->dump() : std::string("null")) + ")";
    }
    return {};
  }
  auto kind = request.find("kind");
  if (!kind || !kind->is_object()) return "request.kind is missing: expected modelops.dev/v1, Kind=ModelService";
  auto group = StringField(*kind, "group");
  auto k = StringField(*kind, "kind");
  if (group != api::kGroup || k != api::kKind)
    return "this webhook admits modelops.dev ModelService objects only, not group \"" + group + "\" kind \"" + k + "\"";
  auto obj = request.find("object");
  if (obj && obj->is_object()) {
    auto av = obj->find("apiVersion");
    auto ok = obj->find("kind");
    if (ok && !(ok->is_string() && ok->str() == api::kKind))
      return "request.object is not a ModelService (kind " + ok->dump() + ")";
    if (av && (!av->is_string() || !av->str().starts_with(std::string(api::kGroup) + "/")))
      return "request.object is not a modelops.dev object (apiVersion " + av->dump() + ")";
  }
  return {};
}

std::optional<AdmissionResponse> Preflight(JsonRef request) {
  const std::string op = StringField(request, "operation");
  if (op == "DELETE" || op == "CONNECT") return Allowed();
  if (auto err = CheckModelServiceRequest(request); !err.empty()) return Denied(400, "BadRequest", err);
  auto obj = request.find("object");
  if (!obj || !obj->is_object()) return Denied(400, "BadRequest", "request.object is missing or not an object");
  if (IsRatchetedUpdate(request)) return Allowed();
  return std::nullopt;
}

bool IsRatchetedUpdate(JsonRef request) {
  if (StringField(request, "operation") != "UPDATE") return false;
  const auto obj = request.find("object");
  if (!obj || !obj->is_object()) return false;
  const auto old = request.find("oldObject");
  if (!old || !old->is_object()) return false;
  const auto spec = obj->find("spec");
  const auto old_spec = old->find("spec");
  return spec && old_spec && JsonEqual(*spec, *old_spec);
}

}  // namespace ms::webhook
