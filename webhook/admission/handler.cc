#include "webhook/admission/handler.h"

#include "shared/api/types.h"
#include "shared/text/json_fields.h"

namespace ms::admission {

bool IsScaleRequest(const AdmissionRequest& request) {
  if (request.sub_resource != "scale") return false;
  const auto& resource = request.resource;
  return resource && resource->group == api::kGroup && resource->resource == api::kPlural;
}

std::string CheckModelServiceRequest(const AdmissionRequest& request) {
  if (IsScaleRequest(request)) {
    const auto& kind = request.kind;
    if (!kind || kind->group != "autoscaling" || kind->kind != "Scale")
      return "the scale subresource of a ModelService is admitted as an autoscaling Scale only";
    const auto& obj = request.object;
    if (obj && obj->is_object() && text::StringView(*obj, "kind") != "Scale") {
      auto k = obj->find("kind");
      return "request.object is not a Scale (kind " + (k ? k->dump() : std::string("null")) + ")";
    }
    return {};
  }
  const auto& kind = request.kind;
  if (!kind) return "request.kind is missing: expected modelops.dev/v1, Kind=ModelService";
  const std::string_view group = kind->group;
  const std::string_view k = kind->kind;
  if (group != api::kGroup || k != api::kKind)
    return "this webhook admits modelops.dev ModelService objects only, not group \"" + std::string(group) +
           "\" kind \"" + std::string(k) + "\"";
  const auto& obj = request.object;
  if (obj && obj->is_object()) {
    auto av = obj->find("apiVersion");
    auto ok = obj->find("kind");
    if (ok && !(ok->is_string() && ok->str() == api::kKind))
      return "request.object is not a ModelService (kind " + ok->dump() + ")";
    if (av && (!av->is_string() || !api::InGroup(av->str())))
      return "request.object is not a modelops.dev object (apiVersion " + av->dump() + ")";
  }
  return {};
}

std::optional<AdmissionResponse> Preflight(const AdmissionRequest& request) {
  const std::string_view op = request.operation;
  if (op == "DELETE" || op == "CONNECT") return Allowed();
  if (auto err = CheckModelServiceRequest(request); !err.empty()) return Denied(400, "BadRequest", err);
  const auto& obj = request.object;
  if (!obj || !obj->is_object()) return Denied(400, "BadRequest", "request.object is missing or not an object");
  if (IsRatchetedUpdate(request)) return Allowed();
  return std::nullopt;
}

bool IsUpdateOf(const AdmissionRequest& request) {
  const auto& obj = request.object;
  const auto& old = request.old_object;
  return request.operation == "UPDATE" && obj && obj->is_object() && old && old->is_object();
}

bool IsRatchetedUpdate(const AdmissionRequest& request) {
  if (!IsUpdateOf(request)) return false;
  const auto spec = request.object->find("spec");
  const auto old_spec = request.old_object->find("spec");
  return spec && old_spec && text::JsonEqual(*spec, *old_spec);
}

}  // namespace ms::admission
