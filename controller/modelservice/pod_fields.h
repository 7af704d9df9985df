// The pod fields of a ModelService (issue 21) in its Deployment's pod
// template, and their repair: the only fields of the template the controller
// owns beside the model container's image, variables, port, GPU limit and
// readiness probe (desired.cc). Pure functions of the defaulted spec.
//
// Owned whole (set as the spec says, removed when it says nothing): the pod
// spec's members in the table kWholeMembers of pod_fields.cc, one row each
// (nodeSelector, tolerations with the GPU toleration of api::PodTolerations,
// affinity, topologySpreadConstraints, imagePullSecrets, serviceAccountName, automountServiceAccountToken: false
// unless serviceAccountName is set, ...), the model container's args and its
// requests and limits of cpu, memory and ephemeral-storage (compared by
// value: "0.5" is "500m").
// Owned by key: the pod labels and annotations of spec.podLabels and
// spec.podAnnotations and the variables of spec.env. The keys last written
// are recorded in the Deployment's annotation kPodKeysAnnotation, so a key
// that leaves the spec leaves the template, while keys others set (kubectl
// rollout restart's annotation, a variable added by hand) stay.
// Hardened (the restricted Pod Security Standard): the pod's
// securityContext.runAsNonRoot and seccompProfile, the model container's
// securityContext.allowPrivilegeEscalation and capabilities.drop; the rest
// of both securityContexts is left alone.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "shared/api/spec.gen.h"

namespace ms::modelservice {

// {"annotations": [...], "env": [...], "labels": [...]}: the keys of
// spec.podAnnotations, the names of spec.env and the keys of spec.podLabels
// the controller last wrote into the pod template.
inline constexpr const char* kPodKeysAnnotation = "modelops.dev/pod-template-keys";

// The members of the pod template's spec the controller owns, beside its
// containers: what a cached Deployment must keep (cached.cc).
std::vector<std::string> OwnedPodSpecMembers();

// Adds the pod fields to a Deployment as DesiredDeployment builds it (its
// template already has the controller's labels and the container "model").
void AddPodFields(const api::ModelServiceSpec& defaulted, nlohmann::json& deployment);

// Sets the pod fields on a Deployment as the API server returns it (after
// the container "model" is repaired), appending what drifted to `drift`;
// leaves `deployment` unchanged when nothing did.
void RepairPodFields(const api::ModelServiceSpec& defaulted, nlohmann::json& deployment,
                     std::vector<std::string>& drift);

}  // namespace ms::modelservice
