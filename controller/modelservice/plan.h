// The plan: a PURE function from one ModelService and the observed world to
// the actions that bring the world to its spec (design.md §3) and the status
// that describes the world once they are made. It is the ModelService
// reconciler's core; it performs no I/O: the executor (executor.h) reads the
// world, asks for the plan once per attempt and makes its writes.
//
// Guarantees:
//  - Only owned fields are compared (desired.h); an unchanged world yields no
//    write and no status update.
//  - An object is ours only by its controller ownerReference (ownership.h).
//    A same-named Deployment or Service that is not ours is never adopted or
//    changed: the ModelService is Failed with reason NameConflict (one
//    Warning Event when that starts) and nothing is created meanwhile.
//  - In autoscaling mode HPA a HorizontalPodAutoscaler of the same name is
//    owned likewise (a same-named one not ours is a NameConflict then); an
//    owned one is deleted when the mode is not HPA any more.
//  - First reconcile adds the finalizer (merge patch carrying the
//    resourceVersion, i.e. with a precondition); deletion deletes the owned
//    Deployment, Service and HPA, and removes the finalizer once none exists
//    (the executor reads them live for that decision). Every delete carries
//    preconditions on the object as read (DeleteOptionsFor, ownership.h).
//    A ModelService deleted with propagationPolicy Orphan (the "orphan"
//    finalizer) deletes nothing: the garbage collector takes its
//    ownerReference off them, and the finalizer is removed at once.
//  - The status is that of the world after the plan's writes (an object it
//    creates or updates counts as the API server will return it: a new
//    Deployment makes the ModelService Progressing at once), and is written
//    only when it differs.
//  - Versions (versions.h): the pod template is the spec's, or the serving
//    version's while an automatic rollback is in effect; a failed rollout is
//    recorded in the status one reconcile before the rollback is written.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "controller/autoscale/autoscaler.h"
#include "controller/modelservice/desired.h"
#include "controller/modelservice/events.h"
#include "controller/modelservice/pods.h"
#include "controller/modelservice/resources.h"
#include "shared/clock/clock.h"

namespace ms::modelservice {

using WallTime = clock::Clock::WallTime;

// One ModelService as one attempt of a reconcile sees it: the object as
// read (metadata, status) and its spec, resolved once (ResolveSpec).
struct View {
  View(nlohmann::json object, const Options& opts);
  nlohmann::json object;
  ResolvedSpec spec;
};

// A write the executor could not make and will not retry blindly (e.g. a 422
// on create): the next plan reports it as phase Failed.
struct WriteFailure {
  std::string reason;   // e.g. CreateFailed
  std::string message;  // e.g. "create Deployment ns/a: 422 Invalid: ..."
};

struct Observed {
  std::optional<nlohmann::json> deployment;  // nullopt: not found (whoever owns it)
  std::optional<nlohmann::json> service;     // nullopt: not found
  // The autoscaler's answer, asked for before reconciling an autoscaled object.
  std::optional<autoscale::Recommendation> recommendation;
  std::optional<WriteFailure> failure;
  // What the pods say (pods.h); nullopt: pods are not watched.
  std::optional<PodSummary> pods = std::nullopt;
  // The HorizontalPodAutoscaler of its name (nullopt: not found); only an
  // owned one is touched: created and repaired in autoscaling mode HPA,
  // deleted otherwise.
  std::optional<nlohmann::json> hpa = std::nullopt;
  // The GPU utilization of its pods (with gpus > 0), for status.gpuUtilization.
  std::optional<autoscale::GpuUtilization> gpu = std::nullopt;
};

enum class ActionType {
  kPatchModelService,  // merge patch (finalizers)
  kCreate,
  kUpdate,  // PUT of the whole object, with its resourceVersion
  kDelete,
};

struct Action {
  ActionType type;
  ObjectRef target;     // what is written (a create: the object it makes)
  nlohmann::json body;  // the object (kCreate, kUpdate), the patch, or the DeleteOptions (kDelete)
};

struct Actions {
  std::vector<Action> writes;            // in order
  std::optional<nlohmann::json> status;  // the new status, when it differs
  std::vector<Event> events;
  // Replicas for the modelservice_replicas gauges.
  int desired_replicas = 0;
  int ready_replicas = 0;
  // Once these writes are made, read the world and reconcile again at once
  // (deletion goes in steps: delete the owned objects, then the finalizer).
  bool look_again = false;
  // Wait and look again (e.g. an owned object is still being deleted).
  bool requeue = false;
  // A same-named object is not ours (api::kReasonNameConflict).
  bool name_conflict = false;

  size_t NumWrites() const { return writes.size() + (status ? 1 : 0); }
};

Actions Plan(const View& model_service, const Observed& observed, const Options& opts, WallTime now);
// The same for an object not parsed yet (tests; the executor parses once per attempt).
Actions Plan(const nlohmann::json& model_service, const Observed& observed, const Options& opts, WallTime now);

// The replicas the Deployment should have: spec.replicas, or with
// autoscaling mode Controller the recommendation when metrics are ok, else
// CurrentReplicas (in mode HPA, spec.replicas: the HPA sets it through /scale).
int DesiredReplicas(const ResolvedSpec& spec, const Observed& observed);

// The replicas of the ModelService's own Deployment (null: none yet), or
// what it would be created with (spec.replicas, clamped to the autoscaling
// bounds when autoscaled).
int CurrentReplicas(const ResolvedSpec& spec, const nlohmann::json* deployment);

bool HasFinalizer(const nlohmann::json& object, const std::string& finalizer);

// The finalizer the API server adds for a delete with propagationPolicy
// Orphan; the garbage collector removes it once it has orphaned the dependents.
inline constexpr const char* kOrphanFinalizer = "orphan";

// metadata.deletionTimestamp is set: the object is being deleted. The one
// definition both the plan and the executor use.
bool BeingDeleted(const nlohmann::json& object);

}  // namespace ms::modelservice
