// What the controller learns from a ModelService's pods that the
// Deployment's status does not say (design.md §3): pods the scheduler cannot
// place (PodScheduled=False, reason Unschedulable, and the scheduler's
// message) and containers that wait for something they do not get by
// themselves (an image that cannot be pulled, a bad image name or
// configuration), and containers that keep exiting (crash-looping).
//
// The pods come from one more informer, on the label every pod of an owned
// Deployment carries (app.kubernetes.io/managed-by=modelservice-controller,
// from the pod template), cached as a projection (CachedPod) that keeps only
// those facts, so that it changes only when one of them does. The PodIndex,
// fed by that informer's events, files the pods under their ModelService by
// the pod's app.kubernetes.io/instance label (the ModelService's name, which
// the pod template carries and the Deployment's selector requires) and
// re-queues a ModelService only when what its status would say about its
// pods changes (PodProblem). A pod that is created, scheduled, started and
// becomes Ready as usual re-queues nothing.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "controller/kube/paths.h"
#include "controller/runtime/informer.h"

namespace ms::modelservice {

inline std::string PodsPath(const std::string& ns = {}) { return kube::CollectionPath("", "v1", "pods", ns); }

// A container counts as crash-looping from this many restarts on, while it
// is not ready and its last run ended (terminated) with a non-zero exit code.
inline constexpr int kCrashLoopRestarts = 3;

// The informer's transform: metadata.name, namespace, the
// app.kubernetes.io/instance label and deletionTimestamp; status.phase only
// when terminal (Succeeded, Failed); the PodScheduled condition only when
// False (type, status, reason, message); containerStatuses only of
// containers waiting for a reason they do not leave by themselves (name,
// state.waiting.reason; ErrImagePull, which alternates with
// ImagePullBackOff at each retry, is kept as ImagePullBackOff), and of
// containers crash-looping (kCrashLoopRestarts; name, crashLooping: the last
// run's exitCode and reason). The restart count and the current state
// (waiting CrashLoopBackOff, then running, at each restart) are not kept:
// they change at every restart.
nlohmann::json CachedPod(const nlohmann::json& pod);

// What a ModelService's pods say, from their projections (CachedPod).
// Pods being deleted or terminated are not counted.
struct PodSummary {
  int pods = 0;
  int unschedulable = 0;            // PodScheduled=False, reason Unschedulable
  std::string scheduler_message{};  // the first (by pod name) of their messages
  int waiting = 0;                  // a container waiting (see CachedPod)
  std::string waiting_reason{};     // the first (by pod name) of their reasons
  std::string waiting_container{};  // and its container
  int crash_looping = 0;            // a container crash-looping (see CachedPod)
  std::string crash_container{};    // the first (by pod name) of them
  int crash_exit_code = 0;          // its last run's exit code
  std::string crash_reason{};       // and reason (e.g. Error, OOMKilled)
  bool operator==(const PodSummary&) const = default;
};
PodSummary SummarizePods(const std::map<std::string, nlohmann::json>& pods_by_name);

// The Degraded cause the pods give, if any: reason Unschedulable with
// "N/M pods cannot be scheduled: <the scheduler's message>", else the
// waiting reason with "N/M pods cannot start: container C is waiting
// (REASON)", else reason CrashLoopBackOff with "N/M pods are crash-looping:
// container C keeps exiting (last exit code E, REASON)". Nothing in it
// changes at each scheduler or kubelet retry.
struct PodProblem {
  std::string reason, message;
  bool operator==(const PodProblem&) const = default;
};
std::optional<PodProblem> FindPodProblem(const PodSummary& summary);

// The pods of each ModelService, by "ns/name" (thread-safe).
class PodIndex {
 public:
  // The pod informer's handler: keeps the index and calls `changed` with the
  // key of a ModelService whose PodProblem changed.
  runtime::EventHandler Handler(std::function<void(const std::string& key)> changed);

  PodSummary Summary(const std::string& key) const;
  size_t size() const;  // pods indexed

 private:
  // Files (or, with `remove`, takes out) one projected pod; returns the key
  // of its ModelService when that one's PodProblem changed, else "".
  std::string Apply(const nlohmann::json& pod, bool remove);

  mutable std::mutex mu_;
  std::map<std::string, std::map<std::string, nlohmann::json>> pods_;  // ModelService key -> pod name -> projection
};

}  // namespace ms::modelservice
