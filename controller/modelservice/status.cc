#include "controller/modelservice/status.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <tuple>
#include <utility>

#include "controller/modelservice/versions.h"
#include "shared/api/types.h"
#include "shared/clock/timefmt.h"
#include "shared/text/json_fields.h"

namespace ms::modelservice {

using nlohmann::json;

namespace {

int64_t Int(const json& obj, const char* key, int64_t def = 0) {
  if (!obj.is_object()) return def;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) return def;
  return it->get<int64_t>();
}

// The status of a Deployment condition, or "" when absent.
const json* DeploymentCondition(const json& d, const std::string& type) {
  if (!d.contains("status") || !d["status"].contains("conditions") || !d["status"]["conditions"].is_array()) {
    return nullptr;
  }
  for (const auto& c : d["status"]["conditions"]) {
    if (c.is_object() && c.value("type", "") == type) return &c;
  }
  return nullptr;
}

}  // namespace

HpaState ObserveHorizontalPodAutoscaler(const json& hpa) {
  HpaState out;
  if (!hpa.is_object() || !hpa.contains("status") || !hpa["status"].is_object()) return out;
  const json& st = hpa["status"];
  if (auto it = st.find("desiredReplicas"); it != st.end() && it->is_number_integer())
    out.desired_replicas = it->get<int>();
  for (const char* type : {"AbleToScale", "ScalingActive"}) {
    const json* c = DeploymentCondition(hpa, type);  // the same conditions list shape
    if (c == nullptr || text::StringField(*c, "status") != "False") continue;
    out.reason = text::StringField(*c, "reason");
    if (out.reason.empty()) out.reason = std::string(type) + "False";
    out.message = "HorizontalPodAutoscaler " + text::MetadataString(hpa, "name") + ": " + type +
                  " False: " + text::StringField(*c, "message");
    break;
  }
  return out;
}

const json* FindCondition(const json* status, const std::string& type) {
  if (status == nullptr || !status->is_object() || !status->contains("conditions")) return nullptr;
  const json& conds = (*status)["conditions"];
  if (!conds.is_array()) return nullptr;
  for (const auto& c : conds) {
    if (c.is_object() && c.value("type", "") == type) return &c;
  }
  return nullptr;
}

json MakeCondition(const json* current_status, const std::string& type, const std::string& status,
                   const std::string& reason, const std::string& message, int64_t generation,
                   clock::Clock::WallTime now) {
  std::string transition = clock::FormatTime(now);
  if (const json* old = FindCondition(current_status, type); old != nullptr && old->value("status", "") == status &&
                                                             old->contains("lastTransitionTime") &&
                                                             (*old)["lastTransitionTime"].is_string()) {
    transition = (*old)["lastTransitionTime"].get<std::string>();
  }
  return {{"type", type},
          {"status", status},
          {"reason", reason},
          {"message", message},
          {"lastTransitionTime", transition},
          {"observedGeneration", generation}};
}

namespace {

// What ComputeStatus derives from the Deployment's progress before writing conditions.
struct Progress {
  int desired = 0;
  int64_t replicas = 0, ready = 0, updated = 0, available = 0;
  bool exists = false;
  bool all_ready = false;
  std::string degraded_reason, degraded_message;  // empty reason: not degraded
  std::string stall_reason, stall_message;        // empty reason: not Stalled (kstatus)
  std::string counts;                             // "1/2 replicas ready"
  bool rolled_out = false;                        // every replica updated and available
  VersionOutcome versions;                        // versions.h
};

// "the rollout of version 4 made no progress for 30s; ...": the Degraded
// message while a rollback is in effect (versions.h).
std::string RollbackMessage(const ResolvedSpec& spec, const VersionStatus& v) {
  const TemplateVersion failed = WantedTemplate(spec);
  const TemplateVersion& serving = *v.serving;
  const bool by_image = failed.version == serving.version;
  auto what = [by_image](const TemplateVersion& t) {
    return by_image ? "image " + t.image : "version " + (t.version.empty() ? std::string("(none)") : t.version);
  };
  const std::string generation =
      v.serving_generation > 0 ? " (the pod template of generation " + std::to_string(v.serving_generation) + ")" : "";
  return "the rollout of " + what(failed) + " made no progress for " + std::to_string(spec.rollout_timeout_seconds) +
         "s; rolled back to " + what(serving) + generation + ", which serves; " + what(failed) +
         " is not rolled out again until the spec changes";
}

// The Degraded cause the autoscaler's answer gives (reason, message), if any.
// While the first answer is pending (a new object, or every object after a
// restart or a leader change: the poller starts afresh), nothing is known
// yet that the status does not already say: a MetricsUnavailable it reports
// stays as it is, so a new leader rewrites no condition and emits no Event
// for what the last one reported.
std::optional<std::pair<std::string, std::string>> MetricsCause(const StatusInput& in) {
  if (!in.autoscaled || !in.recommendation || in.recommendation->metrics_ok) return std::nullopt;
  const autoscale::Recommendation& rec = *in.recommendation;
  if (rec.pending) {
    const json* kept = FindCondition(in.current_status, api::kConditionDegraded);
    if (kept == nullptr || text::StringField(*kept, "status") != "True" ||
        text::StringField(*kept, "reason") != api::kReasonMetricsUnavailable)
      return std::nullopt;
    return std::pair{text::StringField(*kept, "reason"), text::StringField(*kept, "message")};
  }
  return std::pair{rec.reason.empty() ? std::string(api::kReasonMetricsUnavailable) : rec.reason,
                   rec.message.empty() ? std::string("queue length could not be read; replicas kept") : rec.message};
}

// Degraded causes, most important first.
void FindDegradedCause(const ResolvedSpec& spec, const StatusInput& in, const json& d, Progress& r) {
  if (in.failure_reason) {
    r.degraded_reason = *in.failure_reason;
    r.degraded_message = in.failure_message;
  } else if (auto metrics = MetricsCause(in)) {
    std::tie(r.degraded_reason, r.degraded_message) = std::move(*metrics);
  } else if (HpaState h = in.hpa_mode && in.hpa != nullptr ? ObserveHorizontalPodAutoscaler(*in.hpa) : HpaState{};
             !h.reason.empty()) {
    r.degraded_reason = h.reason;
    r.degraded_message = h.message;
  } else if (in.deployment != nullptr) {
    if (const json* c = DeploymentCondition(d, "ReplicaFailure"); c && c->value("status", "") == "True") {
      r.degraded_reason = api::kReasonReplicaFailure;
      r.degraded_message = c->value("message", "the Deployment reports ReplicaFailure");
    } else if (r.versions.failure) {
      r.degraded_reason = api::kReasonRolloutFailed;
      r.degraded_message = *r.versions.failure;
    }
  }
  // What the pods say (Unschedulable, ImagePullBackOff, ...), when nothing above does.
  if (r.degraded_reason.empty() && in.pod_problem) {
    r.degraded_reason = in.pod_problem->reason;
    r.degraded_message = in.pod_problem->message;
  }
  // A rollback in effect, when nothing more pressing is wrong (versions.h).
  if (r.degraded_reason.empty() && r.versions.rolled_back) {
    r.degraded_reason = api::kReasonRolledBack;
    r.degraded_message = RollbackMessage(spec, r.versions.status);
  }
}

// What keeps the spec's generation from being served until the spec or the
// cluster changes (kstatus' Stalled), most pressing first: a failure of the
// owned objects, the Deployment's ReplicaFailure, a failed rollout, what the
// pods say, a rollback in effect. Not the autoscaler's metrics: the pods
// serve the spec at the replicas kept.
void FindStallCause(const ResolvedSpec& spec, const StatusInput& in, const json& d, Progress& r) {
  auto set = [&r](std::string reason, std::string message) {
    r.stall_reason = std::move(reason);
    r.stall_message = std::move(message);
  };
  const json* replica_failure = in.deployment != nullptr ? DeploymentCondition(d, "ReplicaFailure") : nullptr;
  if (in.failure_reason) {
    set(*in.failure_reason, in.failure_message);
  } else if (replica_failure != nullptr && replica_failure->value("status", "") == "True") {
    set(api::kReasonReplicaFailure, replica_failure->value("message", "the Deployment reports ReplicaFailure"));
  } else if (r.versions.failure) {
    set(api::kReasonRolloutFailed, *r.versions.failure);
  } else if (in.pod_problem) {
    set(in.pod_problem->reason, in.pod_problem->message);
  } else if (r.versions.rolled_back) {
    set(api::kReasonRolledBack, RollbackMessage(spec, r.versions.status));
  }
}

Progress ObserveProgress(const ResolvedSpec& spec, const StatusInput& in, clock::Clock::WallTime now) {
  static const json kEmpty = json::object();
  const json& d = in.deployment != nullptr ? *in.deployment : kEmpty;
  const json& ds = d.contains("status") && d["status"].is_object() ? d["status"] : kEmpty;
  Progress r;
  r.desired = in.desired_replicas;
  r.replicas = Int(ds, "replicas");
  r.ready = Int(ds, "readyReplicas");
  r.updated = Int(ds, "updatedReplicas");
  r.available = Int(ds, "availableReplicas");
  const int64_t generation = d.contains("metadata") ? Int(d["metadata"], "generation") : 0;
  r.exists = in.deployment != nullptr;
  r.rolled_out = r.exists && Int(ds, "observedGeneration") >= generation && r.updated >= r.desired &&
                 r.replicas == r.desired && r.available >= r.desired;
  r.all_ready = r.rolled_out && r.ready == r.desired;
  r.counts = std::to_string(r.ready) + "/" + std::to_string(r.desired) + " replicas ready";
  r.versions = ComputeVersions(spec, {in.current_status, in.deployment, r.rolled_out, in.generation}, now);
  FindDegradedCause(spec, in, d, r);
  FindStallCause(spec, in, d, r);
  return r;
}

std::string Phase(const StatusInput& in, const Progress& r) {
  if (in.failure_reason) return api::kPhaseFailed;
  if (!r.degraded_reason.empty()) return api::kPhaseDegraded;
  if (!r.exists) return api::kPhasePending;
  return r.all_ready ? api::kPhaseReady : api::kPhaseProgressing;
}

// Ready: status, reason, message. True only when the spec's generation is
// fully served: nothing Stalled (a rolled-back template serves, not the
// spec's), every wanted replica updated, available and ready.
std::array<std::string, 3> ReadyCondition(const Progress& r) {
  if (!r.stall_reason.empty()) return {"False", r.stall_reason, r.stall_message};
  if (r.all_ready) return {"True", api::kReasonAvailable, r.counts};
  if (!r.exists) return {"False", api::kReasonDeploymentNotFound, "the Deployment does not exist yet"};
  return {"False", api::kReasonReplicasNotReady, r.counts};
}

std::array<std::string, 3> ProgressingCondition(const ResolvedSpec& spec, const StatusInput& in, const Progress& r) {
  if (in.failure_reason) return {"False", *in.failure_reason, in.failure_message};
  // Whatever Degraded reports first (e.g. ReplicaFailure), a failed rollout is not progressing.
  if (r.versions.failure) return {"False", api::kReasonRolloutFailed, *r.versions.failure};
  if (!r.exists) return {"True", api::kReasonCreating, "creating the Deployment and the Service"};
  const VersionOutcome& v = r.versions;
  if (!r.all_ready) {
    // "version 3 → 4: 1/4 updated, 4 ready" while a new version (or image) rolls out or back.
    const std::string progress =
        std::to_string(r.updated) + "/" + std::to_string(r.desired) + " updated, " + std::to_string(r.ready) + " ready";
    const TemplateVersion wanted = WantedTemplate(spec);
    if (v.rolled_back)
      return {"True", api::kReasonRollingBack, DescribeChange(wanted, *v.status.serving) + ": " + progress};
    if (v.status.serving && wanted != *v.status.serving) {
      return {"True", api::kReasonRollingOut, DescribeChange(*v.status.serving, wanted) + ": " + progress};
    }
    return {"True", api::kReasonRollingOut,
            std::to_string(r.updated) + "/" + std::to_string(r.desired) + " replicas updated, " + r.counts};
  }
  if (v.rolled_back) return {"False", api::kReasonRolledBack, RollbackMessage(spec, v.status)};
  return {"False", api::kReasonComplete, "the Deployment has rolled out"};
}

std::array<std::string, 3> DegradedCondition(const Progress& r) {
  if (!r.degraded_reason.empty()) return {"True", r.degraded_reason, r.degraded_message};
  return {"False", api::kReasonAsExpected, ""};
}

// status.desiredReplicas: in mode HPA what the HorizontalPodAutoscaler
// wants (its status.desiredReplicas), else what the Deployment is asked for.
int ReportedDesired(const StatusInput& in, const Progress& r) {
  if (in.hpa_mode && in.hpa != nullptr) {
    if (auto d = ObserveHorizontalPodAutoscaler(*in.hpa).desired_replicas) return *d;
  }
  return r.desired;
}

// status.gpuUtilization (rounded percent) and gpuUtilizationObservedAt, or
// gpuUtilizationMessage. The time of a value equal to the one shown is kept,
// so a steady utilization costs no status write; while the first reading is
// pending (a new poller after a restart), the fields shown stay.
void WriteGpuUtilization(const autoscale::GpuUtilization& gpu, const json* current, json& status) {
  static constexpr const char* kFields[] = {"gpuUtilization", "gpuUtilizationObservedAt", "gpuUtilizationMessage"};
  if (gpu.pending) {
    if (current == nullptr || !current->is_object()) return;
    for (const char* f : kFields)
      if (current->contains(f)) status[f] = (*current)[f];
    return;
  }
  if (!gpu.percent) {
    status["gpuUtilizationMessage"] = gpu.message;
    return;
  }
  const int percent = static_cast<int>(std::clamp(std::lround(*gpu.percent), 0L, 100L));
  status["gpuUtilization"] = percent;
  const bool same = current != nullptr && current->is_object() && current->contains("gpuUtilization") &&
                    (*current)["gpuUtilization"] == percent && current->contains("gpuUtilizationObservedAt");
  status["gpuUtilizationObservedAt"] =
      same ? (*current)["gpuUtilizationObservedAt"] : json(clock::FormatTime(gpu.observed_at));
}

}  // namespace

json ComputeStatus(const ResolvedSpec& spec, const StatusInput& in, clock::Clock::WallTime now) {
  const Progress r = ObserveProgress(spec, in, now);
  json conditions = json::array();
  const std::array<std::string, 3> progressing = ProgressingCondition(spec, in, r);
  for (const auto& [type, c] :
       {std::pair{api::kConditionReady, ReadyCondition(r)}, std::pair{api::kConditionProgressing, progressing},
        std::pair{api::kConditionDegraded, DegradedCondition(r)}}) {
    conditions.push_back(MakeCondition(in.current_status, type, c[0], c[1], c[2], in.generation, now));
  }
  // kstatus' abnormal-true conditions, present only while True (so that a
  // converged object's status is what it was before they existed).
  if (!r.stall_reason.empty()) {
    conditions.push_back(MakeCondition(in.current_status, api::kConditionStalled, "True", r.stall_reason,
                                       r.stall_message, in.generation, now));
  } else if (progressing[0] == "True") {
    conditions.push_back(MakeCondition(in.current_status, api::kConditionReconciling, "True", progressing[1],
                                       progressing[2], in.generation, now));
  }
  json status = {{"observedGeneration", in.generation},
                 {"phase", Phase(in, r)},
                 {"replicas", r.replicas},
                 {"readyReplicas", r.ready},
                 {"readySummary", std::to_string(r.ready) + "/" + std::to_string(ReportedDesired(in, r))},
                 {"desiredReplicas", ReportedDesired(in, r)},
                 {"url", "http://" + spec.name + "." + spec.ns + ".svc:" + std::to_string(spec.port)},
                 {"selector", SelectorString(spec)},
                 {"conditions", conditions}};
  r.versions.status.WriteTo(status);
  if (in.gpu) WriteGpuUtilization(*in.gpu, in.current_status, status);
  // The serving spec of an object that served before it was recorded rides
  // along with a write there is anyway (versions.h).
  if (r.versions.backfill_spec.is_object() && (in.current_status == nullptr || *in.current_status != status)) {
    status["servingSpec"] = r.versions.backfill_spec;
    status["servingGeneration"] = r.versions.backfill_generation;
  }
  return status;
}

}  // namespace ms::modelservice
