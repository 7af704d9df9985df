// What only the controller names: its own name, the labels it sets, the
// kinds of object it touches, one object's identity (ObjectRef) and the API
// paths (the API's own names, group, kind, finalizer, are in api/types.h).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "controller/kube/paths.h"
#include "shared/api/pod_template.h"
#include "shared/api/types.h"

namespace ms::modelservice {

inline constexpr const char* kControllerName = "modelservice";
inline constexpr const char* kReportingController = "modelops.dev/modelservice-controller";

// The pods' labels, which spec.podLabels may not set (api/pod_template.h).
inline constexpr const char* kLabelName = api::kLabelName;
inline constexpr const char* kLabelInstance = api::kLabelInstance;
inline constexpr const char* kLabelManagedBy = api::kLabelManagedBy;
inline constexpr const char* kLabelNameValue = "modelservice";
inline constexpr const char* kManagedByValue = "modelservice-controller";

// The three labels on the Deployment, its pods and the Service.
inline std::map<std::string, std::string> InstanceLabels(const std::string& name) {
  return {{kLabelName, kLabelNameValue}, {kLabelInstance, name}, {kLabelManagedBy, kManagedByValue}};
}
// The Deployment's and the Service's selector.
inline std::map<std::string, std::string> SelectorLabels(const std::string& name) {
  return {{kLabelName, kLabelNameValue}, {kLabelInstance, name}};
}

inline std::string ModelServicesPath(const std::string& ns = {}) {
  return kube::CollectionPath(api::kGroup, api::kVersion, api::kPlural, ns);
}
inline std::string ModelServicePath(const std::string& ns, const std::string& name) {
  return kube::ObjectPath(api::kGroup, api::kVersion, api::kPlural, ns, name);
}
inline std::string ModelServiceStatusPath(const std::string& ns, const std::string& name) {
  return kube::StatusPath(api::kGroup, api::kVersion, api::kPlural, ns, name);
}
inline std::string DeploymentsPath(const std::string& ns = {}) {
  return kube::CollectionPath("apps", "v1", "deployments", ns);
}
inline std::string DeploymentPath(const std::string& ns, const std::string& name) {
  return kube::ObjectPath("apps", "v1", "deployments", ns, name);
}
inline std::string ServicesPath(const std::string& ns = {}) { return kube::CollectionPath("", "v1", "services", ns); }
inline std::string ServicePath(const std::string& ns, const std::string& name) {
  return kube::ObjectPath("", "v1", "services", ns, name);
}

// Autoscaling mode HPA: the owned HorizontalPodAutoscaler.
inline std::string HorizontalPodAutoscalersPath(const std::string& ns = {}) {
  return kube::CollectionPath("autoscaling", "v2", "horizontalpodautoscalers", ns);
}
inline std::string HorizontalPodAutoscalerPath(const std::string& ns, const std::string& name) {
  return kube::ObjectPath("autoscaling", "v2", "horizontalpodautoscalers", ns, name);
}

// The kinds the controller reads and writes.
enum class Kind : uint8_t { kModelService, kDeployment, kService, kHorizontalPodAutoscaler };

// "ModelService", "Deployment", "Service", "HorizontalPodAutoscaler".
std::string_view KindName(Kind kind);
// The kind an object says it is (its "kind"), when it is one of these.
std::optional<Kind> KindOf(const nlohmann::json& object);

// One object: what an Action writes and what the write expectations track.
struct ObjectRef {
  Kind kind;
  std::string ns, name;
  auto operator<=>(const ObjectRef&) const = default;
};

// The object's reference, when it is of a kind above and has a name.
std::optional<ObjectRef> RefOf(const nlohmann::json& object);
// Its API path, and the collection it is created in.
std::string PathOf(const ObjectRef& ref);
std::string CollectionPathOf(const ObjectRef& ref);
// "Deployment ns/name".
std::string Describe(const ObjectRef& ref);

}  // namespace ms::modelservice
