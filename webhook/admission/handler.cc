#include "webhook/admission/handler.h"

#include "api/types.h"
#include "base/json_fields.h"

namespace ms::webhook {

using nlohmann::json;

// Built member by member: nlohmann's initializer lists cost several times
// more (they are inspected to tell an object from an array).
json Allowed() {
  json response(json::value_t::object);
  response["allowed"] = true;
  return response;
}

json Denied(int code, const std::string& reason, const std::string& message) {
  json status(json::value_t::object);
  status["metadata"] = json::object();
  status["status"] = "Failure";
  status["code"] = code;
  status["reason"] = reason;
  status["message"] = message;
  json response(json::value_t::object);
  response["allowed"] = false;
  response["status"] = std::move(status);
  return response;
}

bool IsScaleRequest(const json& request) {
  if (StringField(request, "subResource") != "scale") return false;
  auto resource = request.find("resource");
  if (resource == request.end()) return false;
  return StringField(*resource, "group") == api::kGroup && StringField(*resource, "resource") == api::kPlural;
}

std::string CheckModelServiceRequest(const json& request) {
  if (IsScaleRequest(request)) {
    auto kind = request.find("kind");
    if (kind == request.end() || StringField(*kind, "group") != "autoscaling" || StringField(*kind, "kind") != "Scale")
      return "the scale subresource of a ModelService is admitted as an autoscaling Scale only";
    auto obj = request.find("object");
    if (obj != request.end() && obj->is_object() && StringField(*obj, "kind") != "Scale")
      return "request.object is not a Scale (kind " + obj->value("kind", json()).dump() + ")";
    return {};
  }
  auto kind = request.find("kind");
  if (kind == request.end() || !kind->is_object())
    return "request.kind is missing: expected modelops.dev/v1, Kind=ModelService";
  auto group = StringField(*kind, "group");
  auto k = StringField(*kind, "kind");
  if (group != api::kGroup || k != api::kKind)
    return "this webhook admits modelops.dev ModelService objects only, not group \"" + group + "\" kind \"" + k + "\"";
  auto obj = request.find("object");
  if (obj != request.end() && obj->is_object()) {
    auto av = obj->find("apiVersion");
    auto ok = obj->find("kind");
    if (ok != obj->end() && *ok != api::kKind) return "request.object is not a ModelService (kind " + ok->dump() + ")";
    if (av != obj->end() && (!av->is_string() || av->get<std::string>().rfind(std::string(api::kGroup) + "/", 0) != 0))
      return "request.object is not a modelops.dev object (apiVersion " + av->dump() + ")";
  }
  return {};
}

std::optional<json> Preflight(const json& request) {
  const std::string op = StringField(request, "operation");
  if (op == "DELETE" || op == "CONNECT") return Allowed();
  if (auto err = CheckModelServiceRequest(request); !err.empty()) return Denied(400, "BadRequest", err);
  auto obj = request.find("object");
  if (obj == request.end() || !obj->is_object())
    return Denied(400, "BadRequest", "request.object is missing or not an object");
  if (IsRatchetedUpdate(request)) return Allowed();
  return std::nullopt;
}

bool IsRatchetedUpdate(const json& request) {
  if (StringField(request, "operation") != "UPDATE") return false;
  const auto obj = request.find("object");
  if (obj == request.end() || !obj->is_object()) return false;
  const auto old = request.find("oldObject");
  if (old == request.end() || !old->is_object()) return false;
  const auto spec = obj->find("spec");
  const auto old_spec = old->find("spec");
  return spec != obj->end() && old_spec != old->end() && *spec == *old_spec;
}

}  // namespace ms::webhook
