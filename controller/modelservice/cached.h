// What the controller keeps of each object it watches: the informers'
// transforms. Only the fields that the plan, the status and the
// Events read are cached (never managedFields, annotations, labels other
// than ours, or the parts of a pod template the controller does not own);
// writes that need the whole object (updates) read it through the API.
#pragma once

#include <nlohmann/json.hpp>

namespace ms::modelservice {

// apiVersion, kind, metadata (name, namespace, uid, resourceVersion,
// generation, finalizers, deletionTimestamp), spec, status.
nlohmann::json CachedModelService(const nlohmann::json& object);

// The Deployment's identity, our labels, ownerReferences, the owned parts of
// spec (replicas, progressDeadlineSeconds, strategy, template labels, each container's name, image,
// env, ports, resources and readinessProbe) and the status fields read.
nlohmann::json CachedDeployment(const nlohmann::json& object);

// The Service's identity, our labels, ownerReferences, spec type, selector and ports.
nlohmann::json CachedService(const nlohmann::json& object);

// The HorizontalPodAutoscaler's identity, our labels, ownerReferences, the
// owned parts of spec (scaleTargetRef, min/maxReplicas, metrics, the
// scale-down window) and the status fields the ModelService's status reports.
nlohmann::json CachedHorizontalPodAutoscaler(const nlohmann::json& object);

}  // namespace ms::modelservice
