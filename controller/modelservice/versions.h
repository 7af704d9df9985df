// Versions (design.md §3 "Versions", issue 15): what is serving and since
// when, a rollout that failed, and the automatic rollback. Pure functions of
// the ModelService's status, its spec and the observed Deployment.
//
// What the status records:
//   servingVersion, servingImage  the MODEL_VERSION env and the image of the
//                  Deployment's pod template when its last rollout completed
//                  (every replica updated and available, no old pod left);
//                  servingVersion absent when that template had no version
//   servingSpec, servingGeneration  the spec that rolled out then
//                  (SpecHashInput without replicas, autoscaling, strategy
//                  and rollout: defaults omitted, the image resolved) and
//                  its metadata.generation:
//                  what a rollback restores. Recorded when a rollout
//                  completes; on an object that served before the controller
//                  recorded it, added with the next status write there is
//                  anyway (so an upgrade costs no writes)
//   lastUpdateTime when they last changed (RFC 3339)
//   failedVersion, failedSpecHash  set by an automatic rollback: the spec
//                  whose rollout failed (its version, and SpecHash). While
//                  the spec still hashes to failedSpecHash, the pod template
//                  is built from servingSpec (only servingVersion and
//                  servingImage when it is absent); once it hashes
//                  differently the record is dropped and the new spec rolls
//                  out.
//
// The serving image is kept in the status rather than read back from the
// old ReplicaSet: the controller watches no ReplicaSets, a ReplicaSet may be
// pruned (revisionHistoryLimit) or edited, and the status is the one place
// that survives a restart of the controller and that the user can read.
//
// A rollback goes in two steps, each a reconcile: the first that sees the
// Deployment's ProgressDeadlineExceeded writes the record into the status
// (phase Degraded, reason RolloutFailed, a Warning Event); the next, which
// reads the record back, puts the pod template on the serving version
// (reason RolledBack, a Warning Event). The record is written before the
// Deployment changes, so no crash or conflict between the two writes can
// make the controller try the failed spec again.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "controller/modelservice/desired.h"
#include "shared/clock/clock.h"

namespace ms::modelservice {

// The version and image of a pod template (container "model").
struct TemplateVersion {
  std::string version;  // MODEL_VERSION, "" when unset
  std::string image;
  bool operator==(const TemplateVersion&) const = default;
};

// The version fields of a ModelService status.
struct VersionStatus {
  std::optional<TemplateVersion> serving;  // nullopt: no rollout completed yet
  nlohmann::json serving_spec;             // null: not recorded
  int64_t serving_generation = 0;          // 0: not recorded
  std::string last_update_time;
  std::string failed_version;
  std::string failed_spec_hash;  // empty: no rollback in effect

  static VersionStatus FromStatus(const nlohmann::json* status);
  // Sets (or removes, when empty) the fields on a status object.
  void WriteTo(nlohmann::json& status) const;
};

// The template the spec asks for.
TemplateVersion WantedTemplate(const ResolvedSpec& spec);
// The version and image of the Deployment's pod template (nullopt without a
// container "model").
std::optional<TemplateVersion> DeploymentTemplate(const nlohmann::json& deployment);

// A rollback is in effect: the status' record names this spec and a
// serving version is known.
bool RolledBack(const VersionStatus& status, const ResolvedSpec& spec);

// The spec the pod template is built from: `spec`, or while RolledBack the
// serving spec (its version and image only when none is recorded). What
// kubectl rollout undo leaves alone stays the spec's: replicas, autoscaling,
// the strategy, the rollout's timeout and policy.
ResolvedSpec TemplateSpec(const ResolvedSpec& spec, const VersionStatus& status);

// The Deployment's message when it reports Progressing=False, reason
// ProgressDeadlineExceeded, for its current spec (status.observedGeneration
// >= metadata.generation).
std::optional<std::string> RolloutFailure(const nlohmann::json& deployment);

// "version 3" / "version (none)", or the image when the two templates have
// the same version: "version 3 → 4", "image a:1 → a:2".
std::string DescribeChange(const TemplateVersion& from, const TemplateVersion& to);

// The versions part of the next status.
struct VersionInput {
  const nlohmann::json* current_status = nullptr;
  const nlohmann::json* deployment = nullptr;  // ours, once the plan's writes are made
  bool rolled_out = false;                     // every replica updated and available
  int64_t generation = 0;                      // the ModelService's metadata.generation
};
struct VersionOutcome {
  VersionStatus status;
  // The serving spec of an object that served before it was recorded: for
  // the caller to add when it writes the status anyway (null: nothing).
  nlohmann::json backfill_spec;
  int64_t backfill_generation = 0;
  bool rolled_back = false;            // the record is in effect (RolledBack)
  std::optional<std::string> failure;  // the Deployment's ProgressDeadlineExceeded message
};
VersionOutcome ComputeVersions(const ResolvedSpec& spec, const VersionInput& in, clock::Clock::WallTime now);

}  // namespace ms::modelservice
