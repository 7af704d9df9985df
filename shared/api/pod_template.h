// What the ModelService API says about the pods the controller makes, which
// both the webhook (what a user may set) and the controller (what it writes)
// follow: the labels and environment variables the controller owns, the
// resources a user sets in spec.resources, the GPU resource, and the pods'
// tolerations with the GPU default.
#pragma once

#include <array>
#include <string_view>
#include <vector>

#include "shared/api/spec.gen.h"

namespace ms::api {

// The extended resource spec.gpus becomes (a limit of the model container).
inline constexpr const char* kGpuResource = "nvidia.com/gpu";

// The labels the controller sets on every pod; the first two are the
// Deployment's and the Service's selector. spec.podLabels may not set them.
inline constexpr const char* kLabelName = "app.kubernetes.io/name";
inline constexpr const char* kLabelInstance = "app.kubernetes.io/instance";
inline constexpr const char* kLabelManagedBy = "app.kubernetes.io/managed-by";
inline constexpr std::array<const char*, 3> kControllerPodLabels = {kLabelName, kLabelInstance, kLabelManagedBy};

// The environment variables the controller sets from spec.model and
// spec.version; spec.env may not set them.
inline constexpr const char* kEnvModelName = "MODEL_NAME";
inline constexpr const char* kEnvModelVersion = "MODEL_VERSION";

// The resource names spec.resources takes.
inline constexpr std::array<const char*, 3> kResourceNames = {"cpu", "memory", "ephemeral-storage"};

// Whether `key` is one of kControllerPodLabels.
bool IsControllerPodLabel(std::string_view key);

// The toleration a pod asking for GPUs gets, as Kubernetes'
// ExtendedResourceToleration admission plugin adds it: nvidia.com/gpu,
// operator Exists, effect NoSchedule (GPU nodes carry the taint
// nvidia.com/gpu=present:NoSchedule, or another value).
Toleration GpuToleration();

// The pods' tolerations: spec.tolerations as written, then GpuToleration()
// when gpus (defaulted) is above 0 and no toleration of spec.tolerations has
// the key nvidia.com/gpu. The controller adds it to the pod template rather
// than the webhook to the ModelService: it follows spec.gpus both ways (a
// ModelService scaled down to 0 GPUs loses it, which a defaulted field could
// not tell from the user's own), holds for ModelServices admitted before it
// existed, and is where Kubernetes puts it (on the pod, not its owner).
std::vector<Toleration> PodTolerations(const ModelServiceSpec& defaulted);

}  // namespace ms::api
