#include "controller/modelservice/status.h"

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

json ComputeStatus(const ModelServiceSpec& spec, const StatusInput& in, Clock::WallTime now) {
  const json empty = json::object();
  const json& d = in.deployment != nullptr ? *in.deployment : empty;
  const json& ds = d.contains("status") && d["status"].is_object() ? d["status"] : empty;
  const int desired = in.desired_replicas;
  const int64_t replicas = Int(ds, "replicas");
  const int64_t ready = Int(ds, "readyReplicas");
  const int64_t updated = Int(ds, "updatedReplicas");
  const int64_t available = Int(ds, "availableReplicas");
  const int64_t d_generation = d.contains("metadata") ? Int(d["metadata"], "generation") : 0;
  const int64_t d_observed = Int(ds, "observedGeneration");

  // Degraded causes, most important first.
  std::string degraded_reason, degraded_message;
  if (in.failure_reason) {
    degraded_reason = *in.failure_reason;
    degraded_message = in.failure_message;
  } else if (in.autoscaled && in.recommendation && !in.recommendation->metrics_ok) {
    degraded_reason = in.recommendation->reason.empty() ? "MetricsUnavailable" : in.recommendation->reason;
    degraded_message = in.recommendation->message.empty() ? "queue length could not be read; replicas kept"
                                                          : in.recommendation->message;
  } else if (in.deployment != nullptr) {
    if (const json* c = DeploymentCondition(d, "ReplicaFailure"); c && c->value("status", "") == "True") {
      degraded_reason = "ReplicaFailure";
      degraded_message = c->value("message", "the Deployment reports ReplicaFailure");
    } else if (const json* p = DeploymentCondition(d, "Progressing");
               p && p->value("status", "") == "False" && p->value("reason", "") == "ProgressDeadlineExceeded") {
      degraded_reason = "ProgressDeadlineExceeded";
      degraded_message = p->value("message", "the Deployment exceeded its progress deadline");
    }
  }

  const bool exists = in.deployment != nullptr;
  const bool rolled_out = exists && !in.deployment_changing && d_observed >= d_generation && updated >= desired &&
                          replicas == desired && available >= desired;
  const bool all_ready = rolled_out && ready == desired;

  std::string phase;
  if (in.failure_reason) {
    phase = "Failed";
  } else if (!degraded_reason.empty()) {
    phase = "Degraded";
  } else if (!exists) {
    phase = "Pending";
  } else if (all_ready) {
    phase = "Ready";
  } else {
    phase = "Progressing";
  }

  const std::string counts = std::to_string(ready) + "/" + std::to_string(desired) + " replicas ready";
  json conditions = json::array();
  // Ready
  if (all_ready) {
    conditions.push_back(MakeCondition(in.current_status, "Ready", "True", "Available", counts, in.generation, now));
  } else if (in.failure_reason) {
    conditions.push_back(
        MakeCondition(in.current_status, "Ready", "False", *in.failure_reason, in.failure_message, in.generation, now));
  } else if (!exists) {
    conditions.push_back(MakeCondition(in.current_status, "Ready", "False", "DeploymentNotFound",
                                       "the Deployment does not exist yet", in.generation, now));
  } else {
    conditions.push_back(
        MakeCondition(in.current_status, "Ready", "False", "ReplicasNotReady", counts, in.generation, now));
  }
  // Progressing
  if (in.failure_reason) {
    conditions.push_back(MakeCondition(in.current_status, "Progressing", "False", *in.failure_reason,
                                       in.failure_message, in.generation, now));
  } else if (degraded_reason == "ProgressDeadlineExceeded") {
    conditions.push_back(MakeCondition(in.current_status, "Progressing", "False", degraded_reason, degraded_message,
                                       in.generation, now));
  } else if (!exists) {
    conditions.push_back(MakeCondition(in.current_status, "Progressing", "True", "Creating",
                                       "creating the Deployment and the Service", in.generation, now));
  } else if (!all_ready) {
    const std::string msg = std::to_string(updated) + "/" + std::to_string(desired) + " replicas updated, " + counts;
    conditions.push_back(MakeCondition(in.current_status, "Progressing", "True",
                                       in.deployment_changing ? "Updating" : "RollingOut",
                                       in.deployment_changing ? "updating the Deployment" : msg, in.generation, now));
  } else {
    conditions.push_back(MakeCondition(in.current_status, "Progressing", "False", "Complete",
                                       "the Deployment has rolled out", in.generation, now));
  }
  // Degraded
  if (!degraded_reason.empty()) {
    conditions.push_back(
        MakeCondition(in.current_status, "Degraded", "True", degraded_reason, degraded_message, in.generation, now));
  } else {
    conditions.push_back(MakeCondition(in.current_status, "Degraded", "False", "AsExpected", "", in.generation, now));
  }

  return {{"observedGeneration", in.generation},
          {"phase", phase},
          {"replicas", replicas},
          {"readyReplicas", ready},
          {"desiredReplicas", desired},
          {"url", "http://" + spec.name + "." + spec.ns + ".svc:" + std::to_string(spec.port)},
          {"selector", SelectorString(spec)},
          {"conditions", conditions}};
}

}  // namespace ms::controller
