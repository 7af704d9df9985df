#include "controller/modelservice/pods.h"

#include <array>
#include <string_view>
#include <utility>

#include "controller/modelservice/resources.h"
#include "shared/api/types.h"
#include "shared/text/json_fields.h"

namespace ms::modelservice {

using nlohmann::json;

namespace {

const json* Member(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// A container waiting for this reason stays so until someone acts (a retry
// of the kubelet gives the same answer); "" for any other reason, e.g.
// ContainerCreating, or CrashLoopBackOff, which alternates with Running at
// each restart (a status that says so would change at every restart:
// crash-looping containers are told by their restart count instead, see
// CrashLooping).
std::string StuckReason(const std::string& reason) {
  if (reason == "ErrImagePull") return "ImagePullBackOff";
  static constexpr std::array<std::string_view, 4> kStuck = {"ImagePullBackOff", "ErrImageNeverPull",
                                                             "InvalidImageName", "CreateContainerConfigError"};
  for (std::string_view s : kStuck) {
    if (reason == s) return reason;
  }
  return "";
}

// {exitCode, reason} of a crash-looping container's last run, else null:
// restarted at least kCrashLoopRestarts times, not ready, and its last run
// ended with a non-zero exit code. A container that crashed a few times and
// then runs Ready is not counted, nor one restarted after exiting with 0.
json CrashLooping(const json& c) {
  const json* restarts = Member(c, "restartCount");
  if (restarts == nullptr || !restarts->is_number_integer() || restarts->get<int64_t>() < kCrashLoopRestarts) {
    return nullptr;
  }
  if (const json* ready = Member(c, "ready"); ready != nullptr && ready->is_boolean() && ready->get<bool>()) {
    return nullptr;
  }
  const json* last = Member(c, "lastState");
  const json* terminated = last != nullptr ? Member(*last, "terminated") : nullptr;
  const json* code = terminated != nullptr ? Member(*terminated, "exitCode") : nullptr;
  if (code == nullptr || !code->is_number_integer() || code->get<int64_t>() == 0) return nullptr;
  return {{"exitCode", code->get<int64_t>()}, {"reason", text::StringField(*terminated, "reason")}};
}

std::string KeyOf(const json& pod) {
  const json* meta = Member(pod, "metadata");
  if (meta == nullptr) return "";
  const json* labels = Member(*meta, "labels");
  const std::string instance = labels != nullptr ? text::StringField(*labels, kLabelInstance) : std::string();
  const std::string ns = text::MetadataString(pod, "namespace");
  if (instance.empty() || ns.empty()) return "";
  return ns + "/" + instance;
}

// Counted: not being deleted, not terminated.
bool Counts(const json& pod) {
  const json* meta = Member(pod, "metadata");
  const json* deleting = meta != nullptr ? Member(*meta, "deletionTimestamp") : nullptr;
  if (deleting != nullptr && !deleting->is_null()) return false;
  const json* status = Member(pod, "status");
  const std::string phase = status != nullptr ? text::StringField(*status, "phase") : std::string();
  return phase != "Succeeded" && phase != "Failed";
}

}  // namespace

json CachedPod(const json& pod) {
  json meta = json::object();
  if (const json* m = Member(pod, "metadata"); m != nullptr) {
    for (const char* key : {"name", "namespace", "deletionTimestamp"}) {
      if (const json* v = Member(*m, key); v != nullptr) meta[key] = *v;
    }
    if (const json* labels = Member(*m, "labels"); labels != nullptr) {
      if (const json* v = Member(*labels, kLabelInstance); v != nullptr) meta["labels"][kLabelInstance] = *v;
    }
  }
  json out = {{"metadata", std::move(meta)}};
  const json* st = Member(pod, "status");
  if (st == nullptr || !st->is_object()) return out;

  json status = json::object();
  if (const std::string phase = text::StringField(*st, "phase"); phase == "Succeeded" || phase == "Failed") {
    status["phase"] = phase;
  }
  if (const json* conds = Member(*st, "conditions"); conds != nullptr && conds->is_array()) {
    for (const json& c : *conds) {
      if (text::StringField(c, "type") != "PodScheduled" || text::StringField(c, "status") != "False") continue;
      status["conditions"] = json::array({{{"type", "PodScheduled"},
                                           {"status", "False"},
                                           {"reason", text::StringField(c, "reason")},
                                           {"message", text::StringField(c, "message")}}});
      break;
    }
  }
  if (const json* cs = Member(*st, "containerStatuses"); cs != nullptr && cs->is_array()) {
    json waiting = json::array();
    for (const json& c : *cs) {
      const json* state = Member(c, "state");
      const json* w = state != nullptr ? Member(*state, "waiting") : nullptr;
      const std::string reason = w != nullptr ? StuckReason(text::StringField(*w, "reason")) : std::string();
      if (reason.empty()) continue;
      waiting.push_back({{"name", text::StringField(c, "name")}, {"state", {{"waiting", {{"reason", reason}}}}}});
    }
    for (const json& c : *cs) {
      if (json crash = CrashLooping(c); !crash.is_null()) {
        waiting.push_back({{"name", text::StringField(c, "name")}, {"crashLooping", std::move(crash)}});
      }
    }
    if (!waiting.empty()) status["containerStatuses"] = std::move(waiting);
  }
  if (!status.empty()) out["status"] = std::move(status);
  return out;
}

PodSummary SummarizePods(const std::map<std::string, json>& pods_by_name) {
  PodSummary s;
  for (const auto& [name, pod] : pods_by_name) {
    if (!Counts(pod)) continue;
    s.pods++;
    const json* st = Member(pod, "status");
    if (st == nullptr) continue;
    bool unschedulable = false;
    if (const json* conds = Member(*st, "conditions"); conds != nullptr && conds->is_array()) {
      for (const json& c : *conds) {
        if (text::StringField(c, "type") == "PodScheduled" && text::StringField(c, "status") == "False" &&
            text::StringField(c, "reason") == api::kReasonUnschedulable) {
          unschedulable = true;
          if (s.unschedulable++ == 0) s.scheduler_message = text::StringField(c, "message");
          break;
        }
      }
    }
    if (unschedulable) continue;  // no container runs before the pod is placed
    if (const json* cs = Member(*st, "containerStatuses"); cs != nullptr && cs->is_array()) {
      bool waiting = false;
      for (const json& c : *cs) {
        const json* state = Member(c, "state");
        const json* w = state != nullptr ? Member(*state, "waiting") : nullptr;
        const std::string reason = w != nullptr ? StuckReason(text::StringField(*w, "reason")) : std::string();
        if (reason.empty()) continue;
        if (s.waiting++ == 0) {
          s.waiting_reason = reason;
          s.waiting_container = text::StringField(c, "name");
        }
        waiting = true;
        break;
      }
      for (const json& c : *cs) {
        if (waiting) break;  // a pod counts once, for its most pressing problem
        const json* crash = Member(c, "crashLooping");
        if (crash == nullptr || !crash->is_object()) continue;
        if (s.crash_looping++ == 0) {
          s.crash_container = text::StringField(c, "name");
          const json* code = Member(*crash, "exitCode");
          s.crash_exit_code = code != nullptr && code->is_number_integer() ? code->get<int>() : 0;
          s.crash_reason = text::StringField(*crash, "reason");
        }
        break;
      }
    }
  }
  return s;
}

std::optional<PodProblem> FindPodProblem(const PodSummary& s) {
  const std::string of = "/" + std::to_string(s.pods) + " pods";
  if (s.unschedulable > 0) {
    std::string msg = std::to_string(s.unschedulable) + of + " cannot be scheduled";
    if (!s.scheduler_message.empty()) msg += ": " + s.scheduler_message;
    return PodProblem{api::kReasonUnschedulable, msg};
  }
  if (s.waiting > 0) {
    return PodProblem{s.waiting_reason, std::to_string(s.waiting) + of + " cannot start: container " +
                                            s.waiting_container + " is waiting (" + s.waiting_reason + ")"};
  }
  if (s.crash_looping > 0) {
    std::string last = "last exit code " + std::to_string(s.crash_exit_code);
    if (!s.crash_reason.empty()) last += ", " + s.crash_reason;
    return PodProblem{api::kReasonCrashLoopBackOff, std::to_string(s.crash_looping) + of +
                                                        " are crash-looping: container " + s.crash_container +
                                                        " keeps exiting (" + last + ")"};
  }
  return std::nullopt;
}

std::string PodIndex::Apply(const json& pod, bool remove) {
  const std::string key = KeyOf(pod);
  const std::string name = text::MetadataString(pod, "name");
  if (key.empty() || name.empty()) return "";
  std::lock_guard<std::mutex> g(mu_);
  auto& pods = pods_[key];
  const std::optional<PodProblem> before = FindPodProblem(SummarizePods(pods));
  if (remove || !Counts(pod)) {
    pods.erase(name);
  } else {
    pods[name] = pod;
  }
  const std::optional<PodProblem> after = FindPodProblem(SummarizePods(pods));
  if (pods.empty()) pods_.erase(key);
  return before != after ? key : std::string();
}

runtime::EventHandler PodIndex::Handler(std::function<void(const std::string& key)> changed) {
  auto apply = [this, changed](const json& pod, bool remove) {
    if (std::string key = Apply(pod, remove); !key.empty()) changed(key);
  };
  return {[apply](const json& pod) { apply(pod, false); },
          [apply](const json& old_pod, const json& pod) {
            if (KeyOf(old_pod) != KeyOf(pod)) apply(old_pod, true);  // its instance label was changed
            apply(pod, false);
          },
          [apply](const json& pod) { apply(pod, true); }};
}

PodSummary PodIndex::Summary(const std::string& key) const {
  std::lock_guard<std::mutex> g(mu_);
  auto it = pods_.find(key);
  return it == pods_.end() ? PodSummary{} : SummarizePods(it->second);
}

size_t PodIndex::size() const {
  std::lock_guard<std::mutex> g(mu_);
  size_t n = 0;
  for (const auto& [key, pods] : pods_) n += pods.size();
  return n;
}

}  // namespace ms::modelservice
