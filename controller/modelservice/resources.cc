#include "controller/modelservice/resources.h"

#include "shared/text/json_fields.h"

namespace ms::modelservice {

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kModelService:
      return api::kKind;
    case Kind::kDeployment:
      return "Deployment";
    case Kind::kService:
      return "Service";
    case Kind::kHorizontalPodAutoscaler:
      return "HorizontalPodAutoscaler";
  }
  return "";
}

std::optional<Kind> KindOf(const nlohmann::json& object) {
  const std::string kind = text::StringField(object, "kind");
  for (Kind k : {Kind::kModelService, Kind::kDeployment, Kind::kService, Kind::kHorizontalPodAutoscaler}) {
    if (kind == KindName(k)) return k;
  }
  return std::nullopt;
}

std::optional<ObjectRef> RefOf(const nlohmann::json& object) {
  const std::optional<Kind> kind = KindOf(object);
  const std::string name = text::MetadataString(object, "name");
  if (!kind || name.empty()) return std::nullopt;
  return ObjectRef{*kind, text::MetadataString(object, "namespace"), name};
}

std::string PathOf(const ObjectRef& ref) {
  switch (ref.kind) {
    case Kind::kModelService:
      return ModelServicePath(ref.ns, ref.name);
    case Kind::kDeployment:
      return DeploymentPath(ref.ns, ref.name);
    case Kind::kService:
      return ServicePath(ref.ns, ref.name);
    case Kind::kHorizontalPodAutoscaler:
      return HorizontalPodAutoscalerPath(ref.ns, ref.name);
  }
  return "";
}

std::string CollectionPathOf(const ObjectRef& ref) {
  switch (ref.kind) {
    case Kind::kModelService:
      return ModelServicesPath(ref.ns);
    case Kind::kDeployment:
      return DeploymentsPath(ref.ns);
    case Kind::kService:
      return ServicesPath(ref.ns);
    case Kind::kHorizontalPodAutoscaler:
      return HorizontalPodAutoscalersPath(ref.ns);
  }
  return "";
}

std::string Describe(const ObjectRef& ref) { return std::string(KindName(ref.kind)) + " " + ref.ns + "/" + ref.name; }

}  // namespace ms::modelservice
