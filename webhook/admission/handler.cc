#include "webhook/admission/handler.h"

#include <nlohmann/json.hpp>
#include "shared/api/types.h"

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
    if (obj && obj->is_object && JsonString(obj->kind) != "Scale")
      return "request.object is not a Scale (kind " + JsonDump(obj->kind) + ")";
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
  if (obj && obj->is_object) {
    if (obj->kind && JsonString(obj->kind) != api::kKind)
      return "request.object is not a ModelService (kind " + JsonDump(obj->kind) + ")";
    if (const auto av = JsonString(obj->api_version); obj->api_version && (!av || !api::InGroup(*av)))
      return "request.object is not a modelops.dev object (apiVersion " + JsonDump(obj->api_version) + ")";
  }
  return {};
}

std::optional<AdmissionResponse> Preflight(const AdmissionRequest& request) {
  const std::string_view op = request.operation;
  if (op == "DELETE" || op == "CONNECT") return Allowed();
  if (auto err = CheckModelServiceRequest(request); !err.empty()) return Denied(400, "BadRequest", err);
  const auto& obj = request.object;
  if (!obj || !obj->is_object) return Denied(400, "BadRequest", "request.object is missing or not an object");
  if (IsRatchetedUpdate(request)) return Allowed();
  return std::nullopt;
}

bool IsUpdateOf(const AdmissionRequest& request) {
  const auto& obj = request.object;
  const auto& old = request.old_object;
  return request.operation == "UPDATE" && obj && obj->is_object && old && old->is_object;
}

bool IsRatchetedUpdate(const AdmissionRequest& request) {
  if (!IsUpdateOf(request)) return false;
  const auto& spec = request.object->spec;
  const auto& old_spec = request.old_object->spec;
  if (!spec || !old_spec) return false;
  if (*spec == *old_spec) return true;  // the same text: the same value
  // Compared as values (members in any order, the last of a repeated key).
  return nlohmann::json::parse(*spec, nullptr, false) == nlohmann::json::parse(*old_spec, nullptr, false);
}

}  // namespace ms::admission
