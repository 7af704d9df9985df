#include "controller/modelservice/reconciler.h"

#include <algorithm>

#include "base/strings.h"
#include "controller/modelservice/resources.h"
#include "controller/modelservice/status.h"

namespace ms::controller {

using nlohmann::json;

namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

json Finalizers(const json& ms) {
  if (ms.contains("metadata") && ms["metadata"].contains("finalizers") && ms["metadata"]["finalizers"].is_array()) {
    return ms["metadata"]["finalizers"];
  }
  return json::array();
}

// A merge patch setting metadata.finalizers; the resourceVersion in the
// patch makes the API server reject it with 409 if the object changed.
json FinalizerPatch(const json& ms, const json& finalizers) {
  json meta = {{"finalizers", finalizers}};
  if (ms.contains("metadata") && ms["metadata"].contains("resourceVersion")) {
    meta["resourceVersion"] = ms["metadata"]["resourceVersion"];
  }
  return {{"metadata", meta}};
}

bool BeingDeleted(const json& obj) {
  return obj.contains("metadata") && obj["metadata"].contains("deletionTimestamp") &&
         !obj["metadata"]["deletionTimestamp"].is_null();
}

int64_t Generation(const json& ms) {
  if (ms.contains("metadata") && ms["metadata"].contains("generation") &&
      ms["metadata"]["generation"].is_number_integer()) {
    return ms["metadata"]["generation"].get<int64_t>();
  }
  return 0;
}

// Ours, or nobody's controller (adoptable).
bool OwnedOrAdoptable(const json& obj, const std::string& uid) {
  const std::string c = ControllerUid(obj);
  return c.empty() || c == uid;
}

void ReconcileDeletion(const json& ms, const ModelServiceSpec& spec, const Observed& observed, Actions& out) {
  out.deleting = true;
  if (!HasFinalizer(ms, api::kFinalizer)) return;  // not ours to hold up
  bool waiting = false;
  auto remove = [&](const std::optional<json>& obj, const std::string& kind, const std::string& path) {
    if (!obj || ControllerUid(*obj) != spec.uid) return;  // gone, or not ours
    if (BeingDeleted(*obj)) {
      waiting = true;
      return;
    }
    out.writes.push_back({ActionType::kDelete, kind, path + "?propagationPolicy=Background", json()});
    out.events.push_back({"Normal", "Deleted", "Delete", "Deleted " + kind + " " + spec.ns + "/" + spec.name});
    waiting = true;
  };
  remove(observed.deployment, "Deployment", DeploymentPath(spec.ns, spec.name));
  remove(observed.service, "Service", ServicePath(spec.ns, spec.name));
  if (waiting) {
    out.requeue = out.writes.empty();
    return;
  }
  json finalizers = json::array();
  for (const auto& f : Finalizers(ms)) {
    if (f != api::kFinalizer) finalizers.push_back(f);
  }
  out.writes.push_back({ActionType::kPatchModelService, "ModelService", ModelServicePath(spec.ns, spec.name),
                        FinalizerPatch(ms, finalizers)});
}

}  // namespace

bool HasFinalizer(const json& object, const std::string& finalizer) {
  for (const auto& f : Finalizers(object)) {
    if (f.is_string() && f.get<std::string>() == finalizer) return true;
  }
  return false;
}

int DesiredReplicas(const ModelServiceSpec& spec, const Observed& observed) {
  if (!spec.autoscaling) return spec.replicas;
  const auto& as = *spec.autoscaling;
  if (observed.recommendation && observed.recommendation->metrics_ok) {
    return std::max(1, observed.recommendation->desired_replicas);
  }
  if (observed.deployment) return DeploymentReplicas(*observed.deployment);
  return std::clamp(spec.replicas, as.min_replicas, std::max(as.min_replicas, as.max_replicas));
}

Actions Reconcile(const json& ms, const Observed& observed, const Options& opts, WallTime now) {
  Actions out;
  const ModelServiceSpec spec = ParseSpec(ms, opts);
  if (BeingDeleted(ms)) {
    ReconcileDeletion(ms, spec, observed, out);
    return out;
  }

  if (!HasFinalizer(ms, api::kFinalizer)) {
    json finalizers = Finalizers(ms);
    finalizers.push_back(api::kFinalizer);
    out.writes.push_back({ActionType::kPatchModelService, "ModelService", ModelServicePath(spec.ns, spec.name),
                          FinalizerPatch(ms, finalizers)});
  }

  const int replicas = DesiredReplicas(spec, observed);
  out.desired_replicas = replicas;
  const std::string key = spec.ns + "/" + spec.name;

  std::optional<std::string> failure_reason;
  std::string failure_message;
  if (observed.failure) {
    failure_reason = observed.failure->reason;
    failure_message = observed.failure->message;
  }

  // Deployment.
  bool deployment_changing = false;
  if (!observed.deployment) {
    if (!observed.failure) {
      out.writes.push_back(
          {ActionType::kCreate, "Deployment", DeploymentsPath(spec.ns), DesiredDeployment(spec, replicas)});
      out.events.push_back({"Normal", "Created", "Create",
                            "Created Deployment " + key + " with " + std::to_string(replicas) + " replicas"});
    }
  } else if (!OwnedOrAdoptable(*observed.deployment, spec.uid)) {
    failure_reason = "ResourceExists";
    failure_message = "Deployment " + key + " exists and is controlled by another owner";
  } else {
    json updated = *observed.deployment;
    const int before = DeploymentReplicas(updated);
    Drift drift = RepairDeployment(spec, replicas, updated);
    if (!drift.empty()) {
      deployment_changing = true;
      out.writes.push_back({ActionType::kUpdate, "Deployment", DeploymentPath(spec.ns, spec.name), updated});
      const bool scaled = std::find(drift.begin(), drift.end(), "spec.replicas") != drift.end();
      if (scaled) {
        std::string msg = "Scaled Deployment " + key + " from " + std::to_string(before) + " to " +
                          std::to_string(replicas) + " replicas";
        if (spec.autoscaling && observed.recommendation && observed.recommendation->metrics_ok) {
          msg += " (queue length " + FormatNumber(observed.recommendation->queue_length) + ", target " +
                 std::to_string(spec.autoscaling->target_queue_length) + " per replica)";
        }
        out.events.push_back({"Normal", "Scaled", "Scale", msg});
        drift.erase(std::remove(drift.begin(), drift.end(), "spec.replicas"), drift.end());
      }
      if (!drift.empty()) {
        out.events.push_back({"Normal", "Updated", "Update", "Updated Deployment " + key + ": " + Join(drift)});
      }
    }
  }

  // Service.
  if (!observed.service) {
    if (!observed.failure) {
      out.writes.push_back({ActionType::kCreate, "Service", ServicesPath(spec.ns), DesiredService(spec)});
      out.events.push_back({"Normal", "Created", "Create", "Created Service " + key});
    }
  } else if (!OwnedOrAdoptable(*observed.service, spec.uid)) {
    failure_reason = "ResourceExists";
    failure_message = "Service " + key + " exists and is controlled by another owner";
  } else {
    json updated = *observed.service;
    const Drift drift = RepairService(spec, updated);
    if (!drift.empty()) {
      out.writes.push_back({ActionType::kUpdate, "Service", ServicePath(spec.ns, spec.name), updated});
      out.events.push_back({"Normal", "Updated", "Update", "Updated Service " + key + ": " + Join(drift)});
    }
  }

  // Status.
  const json* current_status = ms.contains("status") && ms["status"].is_object() ? &ms["status"] : nullptr;
  StatusInput in;
  in.current_status = current_status;
  in.generation = Generation(ms);
  in.deployment = observed.deployment ? &*observed.deployment : nullptr;
  in.desired_replicas = replicas;
  in.deployment_changing = deployment_changing;
  in.autoscaled = spec.autoscaling.has_value();
  in.recommendation = observed.recommendation;
  in.failure_reason = failure_reason;
  in.failure_message = failure_message;
  json status = ComputeStatus(spec, in, now);
  out.ready_replicas = status["readyReplicas"].get<int>();
  if (current_status == nullptr || *current_status != status) out.status = status;

  // A Warning when Degraded turns on or changes its reason (not on every
  // resync while it stays so).
  const json* new_degraded = FindCondition(&status, "Degraded");
  const json* old_degraded = FindCondition(current_status, "Degraded");
  if (new_degraded != nullptr && (*new_degraded)["status"] == "True") {
    const bool same = old_degraded != nullptr && old_degraded->value("status", "") == "True" &&
                      old_degraded->value("reason", "") == (*new_degraded)["reason"];
    if (!same) {
      out.events.push_back({"Warning", (*new_degraded)["reason"].get<std::string>(), "Reconcile",
                            (*new_degraded)["message"].get<std::string>()});
    }
  }
  return out;
}

}  // namespace ms::controller
