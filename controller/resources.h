// Names the controller shares with the API: the ModelService group, the
// labels and finalizer it sets, and the API paths of the objects it touches.
#pragma once

#include <map>
#include <string>

#include "controller/kube/paths.h"
#include "shared/api_types.h"

namespace ms::controller {

// The API's names live once, in shared/api_types.h.
inline constexpr const char* kGroup = api::kGroup;
inline constexpr const char* kVersion = api::kVersion;
inline constexpr const char* kApiVersion = api::kApiVersion;
inline constexpr const char* kKind = api::kKind;
inline constexpr const char* kPlural = api::kPlural;
inline constexpr const char* kFinalizer = api::kFinalizer;
inline constexpr const char* kControllerName = "modelservice";
inline constexpr const char* kReportingController = "modelops.dev/modelservice-controller";

inline constexpr const char* kLabelName = "app.kubernetes.io/name";
inline constexpr const char* kLabelInstance = "app.kubernetes.io/instance";
inline constexpr const char* kLabelManagedBy = "app.kubernetes.io/managed-by";
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
  return kube::CollectionPath(kGroup, kVersion, kPlural, ns);
}
inline std::string ModelServicePath(const std::string& ns, const std::string& name) {
  return kube::ObjectPath(kGroup, kVersion, kPlural, ns, name);
}
inline std::string ModelServiceStatusPath(const std::string& ns, const std::string& name) {
  return kube::StatusPath(kGroup, kVersion, kPlural, ns, name);
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

}  // namespace ms::controller
