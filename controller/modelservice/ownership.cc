#include "controller/modelservice/ownership.h"

#include "shared/api/types.h"
#include "shared/text/json_fields.h"

namespace ms::modelservice {

using nlohmann::json;

namespace {

// The controller ownerReference (`controller: true`, a JSON boolean), or null.
const json* ControllerRef(const json& object) {
  if (!object.is_object()) return nullptr;
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return nullptr;
  auto refs = meta->find("ownerReferences");
  if (refs == meta->end() || !refs->is_array()) return nullptr;
  for (const auto& ref : *refs) {
    if (!ref.is_object()) continue;
    auto c = ref.find("controller");
    if (c != ref.end() && c->is_boolean() && c->get<bool>()) return &ref;
  }
  return nullptr;
}

}  // namespace

std::string ControllerUid(const json& object) {
  const json* ref = ControllerRef(object);
  return ref != nullptr ? text::StringField(*ref, "uid") : std::string();
}

bool IsControlledBy(const json& object, const std::string& owner_uid) {
  return !owner_uid.empty() && ControllerUid(object) == owner_uid;
}

json DeleteOptionsFor(const json& object) {
  json options = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"propagationPolicy", "Background"}};
  json preconditions = json::object();
  if (object.is_object() && object.contains("metadata")) {
    const json& meta = object["metadata"];
    if (const std::string uid = text::StringField(meta, "uid"); !uid.empty()) preconditions["uid"] = uid;
    if (const std::string rv = text::StringField(meta, "resourceVersion"); !rv.empty())
      preconditions["resourceVersion"] = rv;
  }
  if (!preconditions.empty()) options["preconditions"] = std::move(preconditions);
  return options;
}

std::string OwnerKey(const json& object) {
  const json* ref = ControllerRef(object);
  if (ref == nullptr) return "";
  if (text::StringField(*ref, "kind") != api::kKind || !api::InGroup(text::StringField(*ref, "apiVersion"))) {
    return "";
  }
  const std::string name = text::StringField(*ref, "name");
  if (name.empty()) return "";
  return text::StringField(object["metadata"], "namespace") + "/" + name;
}

}  // namespace ms::modelservice
