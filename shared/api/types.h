// The ModelService API (design.md §2): names, limits and default values,
// shared by the webhook (validation, defaulting) and the controller.
#pragma once

#include <cstdint>

namespace ms::api {

inline constexpr const char* kGroup = "modelops.dev";
inline constexpr const char* kVersion = "v1";
inline constexpr const char* kApiVersion = "modelops.dev/v1";
inline constexpr const char* kKind = "ModelService";
inline constexpr const char* kPlural = "modelservices";
inline constexpr const char* kFinalizer = "modelops.dev/cleanup";

inline constexpr int64_t kMinReplicas = 1, kMaxReplicas = 100;
inline constexpr int64_t kMinPort = 1, kMaxPort = 65535;
inline constexpr int64_t kMinGpus = 0, kMaxGpus = 16;
inline constexpr size_t kMaxModelLength = 253;
inline constexpr size_t kMaxVersionLength = 63;
inline constexpr size_t kMaxImageLength = 1024;

inline constexpr int64_t kDefaultReplicas = 1;
inline constexpr int64_t kDefaultPort = 8080;
inline constexpr int64_t kDefaultGpus = 0;
inline constexpr const char* kStrategyRollingUpdate = "RollingUpdate";
inline constexpr const char* kStrategyRecreate = "Recreate";
inline constexpr const char* kDefaultMaxSurge = "25%";
inline constexpr int64_t kDefaultMaxUnavailable = 0;
inline constexpr int64_t kDefaultMinReplicas = 1;

// spec.autoscaling.mode (issue 15 part 3): who scales.
inline constexpr const char* kAutoscalingModeController = "Controller";  // the controller's own autoscaler (default)
inline constexpr const char* kAutoscalingModeHPA = "HPA";  // an autoscaling/v2 HorizontalPodAutoscaler it owns

// spec.rollout: how long a rollout may take, and what happens when it fails.
inline constexpr int64_t kMinRolloutTimeoutSeconds = 30, kMaxRolloutTimeoutSeconds = 3600;
inline constexpr int64_t kDefaultRolloutTimeoutSeconds = 600;
inline constexpr const char* kRollbackManual = "Manual";
inline constexpr const char* kRollbackAutomatic = "Automatic";

}  // namespace ms::api
