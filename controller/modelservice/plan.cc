#include "controller/modelservice/plan.h"

#include <algorithm>
#include <cmath>

#include "controller/modelservice/ownership.h"
#include "controller/modelservice/resources.h"
#include "controller/modelservice/status.h"
#include "controller/modelservice/versions.h"
#include "shared/api/types.h"
#include "shared/text/strings.h"

namespace ms::modelservice {

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

// A merge patch of the ModelService guarded by the resourceVersion it was
// read at: the API server rejects it with 409 if the object changed.
json GuardedPatch(const json& ms, json patch) {
  if (ms.contains("metadata") && ms["metadata"].contains("resourceVersion")) {
    patch["metadata"]["resourceVersion"] = ms["metadata"]["resourceVersion"];
  }
  return patch;
}

json FinalizerPatch(const json& ms, const json& finalizers) {
  return GuardedPatch(ms, {{"metadata", {{"finalizers", finalizers}}}});
}

// The object's status, or null.
const json* StatusOf(const json& ms) {
  return ms.is_object() && ms.contains("status") && ms["status"].is_object() ? &ms["status"] : nullptr;
}

int64_t Generation(const json& ms) {
  if (ms.contains("metadata") && ms["metadata"].contains("generation") &&
      ms["metadata"]["generation"].is_number_integer()) {
    return ms["metadata"]["generation"].get<int64_t>();
  }
  return 0;
}

// The observed object when this ModelService controls it, else null.
const json* Ours(const std::optional<json>& obj, const std::string& uid) {
  return obj && IsControlledBy(*obj, uid) ? &*obj : nullptr;
}

ObjectRef Ref(Kind kind, const ResolvedSpec& spec) { return {kind, spec.ns, spec.name}; }

void PlanDeletion(const json& ms, const ResolvedSpec& spec, const Observed& observed, Actions& out) {
  if (!HasFinalizer(ms, api::kFinalizer)) return;  // not ours to hold up
  bool waiting = false;
  auto remove = [&](const json* obj, Kind kind) {
    if (obj == nullptr) return;  // gone, or not ours: never deleted
    waiting = true;
    if (BeingDeleted(*obj)) return;
    out.writes.push_back({ActionType::kDelete, Ref(kind, spec), DeleteOptionsFor(*obj)});
    out.events.push_back({"Normal", "Deleted", "Delete", "Deleted " + Describe(Ref(kind, spec))});
  };
  // Deleted with propagationPolicy Orphan (`kubectl delete --cascade=orphan`):
  // the garbage collector takes the ModelService's ownerReference off its
  // objects and leaves them; nothing is ours to delete.
  if (!HasFinalizer(ms, kOrphanFinalizer)) {
    remove(Ours(observed.deployment, spec.uid), Kind::kDeployment);
    remove(Ours(observed.service, spec.uid), Kind::kService);
    remove(Ours(observed.hpa, spec.uid), Kind::kHorizontalPodAutoscaler);
  }
  if (waiting) {
    // Just deleted: look again at once (usually gone); still terminating: wait.
    out.look_again = !out.writes.empty();
    out.requeue = out.writes.empty();
    return;
  }
  json finalizers = json::array();
  for (const auto& f : Finalizers(ms)) {
    if (f != api::kFinalizer) finalizers.push_back(f);
  }
  out.writes.push_back(
      {ActionType::kPatchModelService, Ref(Kind::kModelService, spec), FinalizerPatch(ms, finalizers)});
}

void EnsureFinalizer(const json& ms, const ResolvedSpec& spec, Actions& out) {
  if (HasFinalizer(ms, api::kFinalizer)) return;
  json finalizers = Finalizers(ms);
  finalizers.push_back(api::kFinalizer);
  out.writes.push_back(
      {ActionType::kPatchModelService, Ref(Kind::kModelService, spec), FinalizerPatch(ms, finalizers)});
}

// The failure that makes the ModelService Failed: a same-named object that
// is not ours, else a write the executor could not make.
std::optional<WriteFailure> Failure(const ResolvedSpec& spec, const Observed& observed) {
  std::vector<std::string> taken;
  if (observed.deployment && !IsControlledBy(*observed.deployment, spec.uid)) taken.push_back("a Deployment");
  if (observed.service && !IsControlledBy(*observed.service, spec.uid)) taken.push_back("a Service");
  // In mode HPA only: otherwise a HorizontalPodAutoscaler of that name is the user's business.
  if (spec.hpa && observed.hpa && !IsControlledBy(*observed.hpa, spec.uid))
    taken.push_back("a HorizontalPodAutoscaler");
  if (!taken.empty()) {
    const bool many = taken.size() > 1;
    std::string what = taken[0];
    for (size_t i = 1; i < taken.size(); ++i) what += (i + 1 == taken.size() ? " and " : ", ") + taken[i];
    return WriteFailure{api::kReasonNameConflict,
                        what + " named \"" + spec.name + "\" already " + (many ? "exist" : "exists") +
                            " in namespace \"" + spec.ns + "\" and " + (many ? "are" : "is") +
                            " not controlled by this ModelService, which leaves " + (many ? "them" : "it") +
                            " alone: delete or rename " + (many ? "them" : "it") +
                            ", or give the ModelService another name"};
  }
  return observed.failure;
}

// Creates or repairs the Deployment.
void PlanDeployment(const ResolvedSpec& spec, const Observed& observed, const json* dep, int replicas, bool may_create,
                    Actions& out) {
  const std::string key = spec.ns + "/" + spec.name;
  if (dep == nullptr) {
    if (!may_create) return;
    out.writes.push_back({ActionType::kCreate, Ref(Kind::kDeployment, spec), DesiredDeployment(spec, replicas)});
    out.events.push_back({"Normal", "Created", "Create",
                          "Created Deployment " + key + " with " + std::to_string(replicas) + " replicas"});
    return;
  }
  json updated = *dep;
  const int before = DeploymentReplicas(updated);
  Drift drift = RepairDeployment(spec, replicas, updated);
  if (drift.empty()) return;
  out.writes.push_back({ActionType::kUpdate, Ref(Kind::kDeployment, spec), std::move(updated)});
  if (std::find(drift.begin(), drift.end(), "spec.replicas") != drift.end()) {
    std::string msg = "Scaled Deployment " + key + " from " + std::to_string(before) + " to " +
                      std::to_string(replicas) + " replicas";
    if (spec.autoscaling && observed.recommendation && observed.recommendation->metrics_ok) {
      msg += " (queue length " + text::FormatNumber(observed.recommendation->queue_length) + ", target " +
             std::to_string(spec.autoscaling->target_queue_length) + " per replica";
      if (const auto& u = observed.recommendation->gpu_utilization) {
        msg += "; GPU utilization " + text::FormatNumber(std::round(*u)) + "%, target " +
               std::to_string(spec.autoscaling->target_gpu_utilization) + "%";
      }
      msg += ")";
    }
    out.events.push_back({"Normal", "Scaled", "Scale", msg});
    drift.erase(std::remove(drift.begin(), drift.end(), "spec.replicas"), drift.end());
  }
  if (!drift.empty()) {
    out.events.push_back({"Normal", "Updated", "Update", "Updated Deployment " + key + ": " + Join(drift)});
  }
}

void PlanService(const ResolvedSpec& spec, const json* svc, bool may_create, Actions& out) {
  const std::string key = spec.ns + "/" + spec.name;
  if (svc == nullptr) {
    if (!may_create) return;
    out.writes.push_back({ActionType::kCreate, Ref(Kind::kService, spec), DesiredService(spec)});
    // Created together with the Deployment: one Event says both.
    if (!out.events.empty() && out.events.back().reason == "Created") {
      out.events.back().message += " and Service " + key;
    } else {
      out.events.push_back({"Normal", "Created", "Create", "Created Service " + key});
    }
    return;
  }
  json updated = *svc;
  const Drift drift = RepairService(spec, updated);
  if (drift.empty()) return;
  out.writes.push_back({ActionType::kUpdate, Ref(Kind::kService, spec), std::move(updated)});
  out.events.push_back({"Normal", "Updated", "Update", "Updated Service " + key + ": " + Join(drift)});
}

// Autoscaling mode HPA: creates or repairs the owned HorizontalPodAutoscaler;
// in any other mode deletes an owned one (left from mode HPA).
void PlanHorizontalPodAutoscaler(const ResolvedSpec& spec, const Options& opts, const json* hpa, bool may_create,
                                 Actions& out) {
  const std::string key = spec.ns + "/" + spec.name;
  if (!spec.hpa) {
    if (hpa == nullptr || BeingDeleted(*hpa)) return;
    out.writes.push_back({ActionType::kDelete, Ref(Kind::kHorizontalPodAutoscaler, spec), DeleteOptionsFor(*hpa)});
    out.events.push_back({"Normal", "Deleted", "Delete",
                          "Deleted HorizontalPodAutoscaler " + key + ": spec.autoscaling.mode is not HPA any more"});
    return;
  }
  if (hpa == nullptr) {
    if (!may_create) return;
    const autoscale::Spec& as = *spec.autoscaling;
    out.writes.push_back(
        {ActionType::kCreate, Ref(Kind::kHorizontalPodAutoscaler, spec), DesiredHorizontalPodAutoscaler(spec, opts)});
    out.events.push_back({"Normal", "Created", "Create",
                          "Created HorizontalPodAutoscaler " + key + " (" + std::to_string(as.min_replicas) + ".." +
                              std::to_string(as.max_replicas) + " replicas, External metric " + kQueueLengthMetric +
                              ", target " + std::to_string(as.target_queue_length) + " per replica)"});
    return;
  }
  json updated = *hpa;
  const Drift drift = RepairHorizontalPodAutoscaler(spec, opts, updated);
  if (drift.empty()) return;
  out.writes.push_back({ActionType::kUpdate, Ref(Kind::kHorizontalPodAutoscaler, spec), std::move(updated)});
  out.events.push_back({"Normal", "Updated", "Update", "Updated HorizontalPodAutoscaler " + key + ": " + Join(drift)});
}

// Mode HPA while our HorizontalPodAutoscaler is not there (the mode was just
// switched to HPA, or the HPA was deleted) and our Deployment runs: its pods
// run at the count the previous decider set (the controller's own
// autoscaler, or a user), and the HPA will start from spec.replicas. So
// spec.replicas first takes that count, clamped into [minReplicas,
// maxReplicas], and the Deployment keeps it: the switch neither removes pods
// nor adds any before the HPA's first decision. Returns the replica count
// handed over (the Deployment's, for this pass) when it patches spec.replicas.
std::optional<int> HandOverToHpa(const json& ms, const ResolvedSpec& spec, const Observed& observed, Actions& out) {
  if (!spec.hpa || observed.hpa) return std::nullopt;  // an HPA of that name not ours is a conflict
  const json* dep = Ours(observed.deployment, spec.uid);
  if (dep == nullptr || BeingDeleted(*dep)) return std::nullopt;
  for (const Action& a : out.writes) {
    if (a.type == ActionType::kPatchModelService) return std::nullopt;  // the finalizer first, the next pass this
  }
  const autoscale::Spec& as = *spec.autoscaling;
  const int current = DeploymentReplicas(*dep);
  const int handed = std::clamp(current, as.min_replicas, std::max(as.min_replicas, as.max_replicas));
  if (handed == spec.replicas) return std::nullopt;
  out.writes.push_back({ActionType::kPatchModelService, Ref(Kind::kModelService, spec),
                        GuardedPatch(ms, {{"spec", {{"replicas", handed}}}})});
  std::string msg = "Set spec.replicas from " + std::to_string(spec.replicas) + " to " + std::to_string(handed) +
                    ", the Deployment's current replicas";
  if (handed != current) {
    msg += " (" + std::to_string(current) + ") clamped into " + std::to_string(as.min_replicas) + ".." +
           std::to_string(as.max_replicas);
  }
  out.events.push_back({"Normal", "HandedOverToHPA", "Scale",
                        msg + ", for the HorizontalPodAutoscaler to start from (spec.autoscaling.mode HPA)"});
  return handed;
}

// What an owned object of `kind` will be once the plan's writes are made, as
// the API server returns it: what a create writes (generation 1), what an
// update writes (a new generation when its spec changes; the status stays
// the observed one), else `observed` (null: none). `storage` holds a copy.
const json* AfterWrites(const Actions& out, Kind kind, const json* observed, json& storage) {
  for (const Action& a : out.writes) {
    if (a.target.kind != kind || (a.type != ActionType::kCreate && a.type != ActionType::kUpdate)) continue;
    storage = a.body;
    int64_t generation = 1;
    if (a.type == ActionType::kUpdate && observed != nullptr) {
      generation = Generation(*observed);
      if (observed->value("spec", json()) != storage.value("spec", json())) ++generation;
    }
    storage["metadata"]["generation"] = generation;
    return &storage;
  }
  return observed;
}

// The new status when it differs, and a Warning when Degraded turns on or
// changes its reason (not on every resync while it stays so). Judged against
// the stored status, not against what this process saw before: a restarted
// controller or a new leader, whose Event correlator starts empty, emits no
// Event for a state the status already reports (the last leader did).
void PlanStatus(const json& ms, const ResolvedSpec& spec, StatusInput in, WallTime now, Actions& out) {
  const json* current = StatusOf(ms);
  in.current_status = current;
  json status = ComputeStatus(spec, in, now);
  out.ready_replicas = status["readyReplicas"].get<int>();

  const json* new_degraded = FindCondition(&status, api::kConditionDegraded);
  const json* old_degraded = FindCondition(current, api::kConditionDegraded);
  if (new_degraded != nullptr && (*new_degraded)["status"] == "True") {
    const bool same = old_degraded != nullptr && old_degraded->value("status", "") == "True" &&
                      old_degraded->value("reason", "") == (*new_degraded)["reason"];
    if (!same) {
      out.events.push_back({"Warning", (*new_degraded)["reason"].get<std::string>(), "Reconcile",
                            (*new_degraded)["message"].get<std::string>()});
    }
  }
  if (current == nullptr || *current != status) out.status = std::move(status);
}

}  // namespace

bool HasFinalizer(const json& object, const std::string& finalizer) {
  for (const auto& f : Finalizers(object)) {
    if (f.is_string() && f.get<std::string>() == finalizer) return true;
  }
  return false;
}

bool BeingDeleted(const json& obj) {
  return obj.is_object() && obj.contains("metadata") && obj["metadata"].is_object() &&
         obj["metadata"].contains("deletionTimestamp") && !obj["metadata"]["deletionTimestamp"].is_null();
}

int CurrentReplicas(const ResolvedSpec& spec, const json* deployment) {
  if (deployment != nullptr) return DeploymentReplicas(*deployment);
  if (!spec.autoscaling) return spec.replicas;
  const auto& as = *spec.autoscaling;
  return std::clamp(spec.replicas, as.min_replicas, std::max(as.min_replicas, as.max_replicas));
}

int DesiredReplicas(const ResolvedSpec& spec, const Observed& observed) {
  if (!spec.autoscaling || spec.hpa) return spec.replicas;
  if (observed.recommendation && observed.recommendation->metrics_ok) {
    return std::max(1, observed.recommendation->desired_replicas);
  }
  return CurrentReplicas(spec, Ours(observed.deployment, spec.uid));
}

View::View(json object_, const Options& opts) : object(std::move(object_)), spec(ResolveSpec(object, opts)) {}

Actions Plan(const json& ms, const Observed& observed, const Options& opts, WallTime now) {
  return Plan(View(ms, opts), observed, opts, now);
}

Actions Plan(const View& view, const Observed& observed, const Options& opts, WallTime now) {
  const json& ms = view.object;
  const ResolvedSpec& spec = view.spec;
  Actions out;
  if (BeingDeleted(ms)) {
    PlanDeletion(ms, spec, observed, out);
    return out;
  }
  EnsureFinalizer(ms, spec, out);

  const std::optional<WriteFailure> failure = Failure(spec, observed);
  const std::optional<int> handed = failure ? std::nullopt : HandOverToHpa(ms, spec, observed, out);
  const int replicas = handed.value_or(DesiredReplicas(spec, observed));
  out.desired_replicas = replicas;
  out.name_conflict = failure && failure->reason == api::kReasonNameConflict;
  // The pod template: the spec's, or the serving version's while a rollback is in effect (versions.h).
  const ResolvedSpec pods = TemplateSpec(spec, VersionStatus::FromStatus(StatusOf(ms)));
  const json* dep = Ours(observed.deployment, spec.uid);
  const json* hpa = Ours(observed.hpa, spec.uid);
  PlanDeployment(pods, observed, dep, replicas, !failure, out);
  PlanService(spec, Ours(observed.service, spec.uid), !failure, out);
  PlanHorizontalPodAutoscaler(spec, opts, hpa, !failure, out);

  // The status is that of the world once these writes are made.
  json dep_after, hpa_after;
  StatusInput in;
  in.generation = Generation(ms) + (handed ? 1 : 0);  // the hand-over patches the spec: a new generation
  in.deployment = AfterWrites(out, Kind::kDeployment, dep, dep_after);
  in.desired_replicas = replicas;
  in.hpa_mode = spec.hpa;
  in.hpa = AfterWrites(out, Kind::kHorizontalPodAutoscaler, hpa, hpa_after);
  in.autoscaled = spec.autoscaling.has_value() && !spec.hpa;
  in.recommendation = observed.recommendation;
  in.gpu = observed.gpu;
  if (observed.pods) in.pod_problem = FindPodProblem(*observed.pods);
  if (failure) {
    in.failure_reason = failure->reason;
    in.failure_message = failure->message;
  }
  PlanStatus(ms, spec, std::move(in), now, out);
  return out;
}

}  // namespace ms::modelservice
