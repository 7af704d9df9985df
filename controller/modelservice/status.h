// The ModelService status (design.md §3) computed from what was observed:
// phase, replica counts, url and the Ready / Progressing / Degraded
// conditions, and kstatus' Reconciling / Stalled, present only while True
// (docs/user/status.md, "Health": Ready is True only when the spec's
// generation is fully served; Stalled when it cannot be without a change to
// the spec or the cluster; Reconciling while it is on its way). A condition keeps its lastTransitionTime while its
// status does not change, so recomputing the status of an unchanged world gives back the current status exactly (and
// the plan then writes nothing). Nor does a process that knows less than the status says: while the autoscaler's first
// answer is pending (after a restart or a leader change), a MetricsUnavailable the status reports stays, and so do the
// GPU fields.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "controller/autoscale/autoscaler.h"
#include "controller/modelservice/desired.h"
#include "controller/modelservice/pods.h"
#include "shared/clock/clock.h"

namespace ms::modelservice {

struct StatusInput {
  const nlohmann::json* current_status = nullptr;  // the ModelService's status (may be null)
  int64_t generation = 0;                          // metadata.generation
  // The Deployment as it will be once the plan's writes are made (null: none).
  const nlohmann::json* deployment = nullptr;
  int desired_replicas = 1;
  bool autoscaled = false;
  std::optional<autoscale::Recommendation> recommendation;  // when autoscaled
  std::optional<std::string> failure_reason;                // set: phase Failed
  std::string failure_message;
  // Autoscaling mode HPA: the owned HorizontalPodAutoscaler (null: none yet).
  bool hpa_mode = false;
  const nlohmann::json* hpa = nullptr;
  std::optional<PodProblem> pod_problem;  // set: Degraded, unless a cause above is
  // status.gpuUtilization and its time, or why it cannot be read (nullopt:
  // not read, no such fields).
  std::optional<autoscale::GpuUtilization> gpu;
};

// What the ModelService's status reports of its HorizontalPodAutoscaler
// (autoscaling mode HPA).
struct HpaState {
  std::optional<int> desired_replicas;  // its status.desiredReplicas
  // Set when it cannot scale: the reason of its AbleToScale or ScalingActive
  // condition that is False (e.g. FailedGetExternalMetric), and why.
  std::string reason, message;
};
HpaState ObserveHorizontalPodAutoscaler(const nlohmann::json& hpa);

// The status, with the version fields of versions.h (servingVersion, ...).
nlohmann::json ComputeStatus(const ResolvedSpec& spec, const StatusInput& in, clock::Clock::WallTime now);

// One condition, keeping lastTransitionTime from `current_status` when the
// condition of that type had the same status.
nlohmann::json MakeCondition(const nlohmann::json* current_status, const std::string& type, const std::string& status,
                             const std::string& reason, const std::string& message, int64_t generation,
                             clock::Clock::WallTime now);

// The condition of `type` in `status`, or null.
const nlohmann::json* FindCondition(const nlohmann::json* status, const std::string& type);

}  // namespace ms::modelservice
