#include "controller/modelservice/status.h"

#include <array>
#include <utility>

#include "base/json_fields.h"
#include "base/timefmt.h"

namespace ms::controller {

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
    if (c == nullptr || StringField(*c, "status") != "False") continue;
    out.reason = StringField(*c, "reason");
    if (out.reason.empty()) out.reason = std::string(type) + "False";
    out.message = "HorizontalPodAutoscaler " + MetadataString(hpa, "name") + ": " + type +
                  " False: " + StringField(*c, "message");
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
                   const std::string& reason, const std::string& message, int64_t generation, Clock::WallTime now) {
  std::string transition = FormatTime(now);
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

// What ComputeStatus derives from the Deployment before writing conditions.
struct Rollout {
  int desired = 0;
  int64_t replicas = 0, ready = 0, updated = 0, available = 0;
  bool exists = false;
  bool all_ready = false;
  std::string degraded_reason, degraded_message;  // empty reason: not degraded
  std::string counts;                             // "1/2 replicas ready"
};

// Degraded causes, most important first.
void FindDegradedCause(const StatusInput& in, const json& d, Rollout& r) {
  if (in.failure_reason) {
    r.degraded_reason = *in.failure_reason;
    r.degraded_message = in.failure_message;
  } else if (in.autoscaled && in.recommendation && !in.recommendation->metrics_ok) {
    r.degraded_reason = in.recommendation->reason.empty() ? "MetricsUnavailable" : in.recommendation->reason;
    r.degraded_message = in.recommendation->message.empty() ? "queue length could not be read; replicas kept"
                                                            : in.recommendation->message;
  } else if (HpaState h = in.hpa_mode && in.hpa != nullptr ? ObserveHorizontalPodAutoscaler(*in.hpa) : HpaState{};
             !h.reason.empty()) {
    r.degraded_reason = h.reason;
    r.degraded_message = h.message;
  } else if (in.deployment != nullptr) {
    if (const json* c = DeploymentCondition(d, "ReplicaFailure"); c && c->value("status", "") == "True") {
      r.degraded_reason = "ReplicaFailure";
      r.degraded_message = c->value("message", "the Deployment reports ReplicaFailure");
    } else if (const json* p = DeploymentCondition(d, "Progressing");
               p && p->value("status", "") == "False" && p->value("reason", "") == "ProgressDeadlineExceeded") {
      r.degraded_reason = "ProgressDeadlineExceeded";
      r.degraded_message = p->value("message", "the Deployment exceeded its progress deadline");
    }
  }
  // What the pods say (Unschedulable, ImagePullBackOff, ...), when nothing above does.
  if (r.degraded_reason.empty() && in.pod_problem) {
    r.degraded_reason = in.pod_problem->reason;
    r.degraded_message = in.pod_problem->message;
  }
}

Rollout Observe(const StatusInput& in) {
  static const json kEmpty = json::object();
  const json& d = in.deployment != nullptr ? *in.deployment : kEmpty;
  const json& ds = d.contains("status") && d["status"].is_object() ? d["status"] : kEmpty;
  Rollout r;
  r.desired = in.desired_replicas;
  r.replicas = Int(ds, "replicas");
  r.ready = Int(ds, "readyReplicas");
  r.updated = Int(ds, "updatedReplicas");
  r.available = Int(ds, "availableReplicas");
  const int64_t generation = d.contains("metadata") ? Int(d["metadata"], "generation") : 0;
  r.exists = in.deployment != nullptr;
  const bool rolled_out = r.exists && !in.deployment_changing && Int(ds, "observedGeneration") >= generation &&
                          r.updated >= r.desired && r.replicas == r.desired && r.available >= r.desired;
  r.all_ready = rolled_out && r.ready == r.desired;
  r.counts = std::to_string(r.ready) + "/" + std::to_string(r.desired) + " replicas ready";
  FindDegradedCause(in, d, r);
  return r;
}

std::string Phase(const StatusInput& in, const Rollout& r) {
  if (in.failure_reason) return "Failed";
  if (!r.degraded_reason.empty()) return "Degraded";
  if (!r.exists) return "Pending";
  return r.all_ready ? "Ready" : "Progressing";
}

// Ready: status, reason, message.
std::array<std::string, 3> ReadyCondition(const StatusInput& in, const Rollout& r) {
  if (r.all_ready) return {"True", "Available", r.counts};
  if (in.failure_reason) return {"False", *in.failure_reason, in.failure_message};
  if (!r.exists) return {"False", "DeploymentNotFound", "the Deployment does not exist yet"};
  return {"False", "ReplicasNotReady", r.counts};
}

std::array<std::string, 3> ProgressingCondition(const StatusInput& in, const Rollout& r) {
  if (in.failure_reason) return {"False", *in.failure_reason, in.failure_message};
  if (r.degraded_reason == "ProgressDeadlineExceeded") return {"False", r.degraded_reason, r.degraded_message};
  if (!r.exists) return {"True", "Creating", "creating the Deployment and the Service"};
  if (in.deployment_changing) return {"True", "Updating", "updating the Deployment"};
  if (!r.all_ready) {
    return {"True", "RollingOut",
            std::to_string(r.updated) + "/" + std::to_string(r.desired) + " replicas updated, " + r.counts};
  }
  return {"False", "Complete", "the Deployment has rolled out"};
}

std::array<std::string, 3> DegradedCondition(const Rollout& r) {
  if (!r.degraded_reason.empty()) return {"True", r.degraded_reason, r.degraded_message};
  return {"False", "AsExpected", ""};
}

// status.desiredReplicas: in mode HPA what the HorizontalPodAutoscaler
// wants (its status.desiredReplicas), else what the Deployment is asked for.
int ReportedDesired(const StatusInput& in, const Rollout& r) {
  if (in.hpa_mode && in.hpa != nullptr) {
    if (auto d = ObserveHorizontalPodAutoscaler(*in.hpa).desired_replicas) return *d;
  }
  return r.desired;
}

}  // namespace

json ComputeStatus(const ModelServiceSpec& spec, const StatusInput& in, Clock::WallTime now) {
  const Rollout r = Observe(in);
  json conditions = json::array();
  for (const auto& [type, c] :
       {std::pair{"Ready", ReadyCondition(in, r)}, std::pair{"Progressing", ProgressingCondition(in, r)},
        std::pair{"Degraded", DegradedCondition(r)}}) {
    conditions.push_back(MakeCondition(in.current_status, type, c[0], c[1], c[2], in.generation, now));
  }
  return {{"observedGeneration", in.generation},
          {"phase", Phase(in, r)},
          {"replicas", r.replicas},
          {"readyReplicas", r.ready},
          {"desiredReplicas", ReportedDesired(in, r)},
          {"url", "http://" + spec.name + "." + spec.ns + ".svc:" + std::to_string(spec.port)},
          {"selector", SelectorString(spec)},
          {"conditions", conditions}};
}

}  // namespace ms::controller
