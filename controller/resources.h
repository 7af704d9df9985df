// Names the controller shares with the API: the ModelService group, the
// labels and finalizer it sets, and the API paths of the objects it touches.
#pragma once

#include <map>
#include <string>

#include "controller/kube/paths.h"

namespace ms::controller {

inline constexpr const char* kGroup = "modelops.dev";
inline constexpr const char* kVersion = "v1";
inline constexpr const char* kApiVersion = "modelops.dev/v1";
inline constexpr const char* kKind = "ModelService";
inline constexpr const char* kPlural = "modelservices";
inline constexpr const char* kFinalizer = "modelops.dev/cleanup";
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
