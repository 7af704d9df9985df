#include "controller/modelservice/cached.h"

#include "controller/modelservice/container_fields.h"
#include "controller/modelservice/pod_fields.h"
#include "controller/modelservice/resources.h"
#include "controller/runtime/projection.h"

namespace ms::modelservice {

using nlohmann::json;

namespace {

json OurLabels() {
  json labels = json::object();
  for (const auto& [k, v] : InstanceLabels("")) labels[k] = true;
  return labels;
}

// What every cached object keeps of metadata.
json MetadataMask(bool labels) {
  json meta = {{"name", true},       {"namespace", true},        {"uid", true}, {"resourceVersion", true},
               {"generation", true}, {"deletionTimestamp", true}};
  if (labels) {
    meta["labels"] = OurLabels();
    meta["ownerReferences"] = true;
  }
  return meta;
}

const json& ModelServiceMask() {
  static const json mask = [] {
    json meta = MetadataMask(false);
    meta["finalizers"] = true;
    return json{{"apiVersion", true}, {"kind", true}, {"metadata", meta}, {"spec", true}, {"status", true}};
  }();
  return mask;
}

const json& DeploymentMask() {
  static const json mask = [] {
    json container = {{"name", true},      {"image", true}, {"env", true},
                      {"resources", true}, {"args", true},  {"securityContext", true}};
    for (const auto& member : OwnedContainerMembers()) container[member] = true;
    // The pod fields (pod_fields.h): spec.podLabels and podAnnotations may
    // name any key, so the template's labels and annotations are kept whole.
    json pod = {{"containers", container}};
    for (const auto& member : OwnedPodSpecMembers()) pod[member] = true;
    const json spec = {{"replicas", true},
                       {"progressDeadlineSeconds", true},
                       {"strategy", true},
                       {"template", {{"metadata", {{"labels", true}, {"annotations", true}}}, {"spec", pod}}}};
    const json status = {{"observedGeneration", true},
                         {"replicas", true},
                         {"readyReplicas", true},
                         {"updatedReplicas", true},
                         {"availableReplicas", true},
                         {"conditions", {{"type", true}, {"status", true}, {"reason", true}, {"message", true}}}};
    json meta = MetadataMask(true);
    meta["annotations"] = {{kPodKeysAnnotation, true}};
    return json{{"apiVersion", true}, {"kind", true}, {"metadata", meta}, {"spec", spec}, {"status", status}};
  }();
  return mask;
}

const json& ServiceMask() {
  static const json mask = json{{"apiVersion", true},
                                {"kind", true},
                                {"metadata", MetadataMask(true)},
                                {"spec", {{"type", true}, {"selector", true}, {"ports", true}}}};
  return mask;
}

const json& HorizontalPodAutoscalerMask() {
  static const json mask = [] {
    const json spec = {{"scaleTargetRef", true},
                       {"minReplicas", true},
                       {"maxReplicas", true},
                       {"metrics", true},
                       {"behavior", {{"scaleDown", {{"stabilizationWindowSeconds", true}}}}}};
    const json status = {{"desiredReplicas", true},
                         {"conditions", {{"type", true}, {"status", true}, {"reason", true}, {"message", true}}}};
    return json{
        {"apiVersion", true}, {"kind", true}, {"metadata", MetadataMask(true)}, {"spec", spec}, {"status", status}};
  }();
  return mask;
}

}  // namespace

json CachedModelService(const json& object) { return runtime::Project(object, ModelServiceMask()); }
json CachedDeployment(const json& object) { return runtime::Project(object, DeploymentMask()); }
json CachedService(const json& object) { return runtime::Project(object, ServiceMask()); }
json CachedHorizontalPodAutoscaler(const json& object) {
  return runtime::Project(object, HorizontalPodAutoscalerMask());
}

}  // namespace ms::modelservice
