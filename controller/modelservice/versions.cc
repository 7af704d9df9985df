#include "controller/modelservice/versions.h"

#include "shared/clock/timefmt.h"
#include "shared/text/json_fields.h"

namespace ms::modelservice {

using nlohmann::json;

namespace {

int64_t IntAt(const json& obj, const char* key) {
  if (!obj.is_object()) return 0;
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

const json& At(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

void SetOrErase(json& obj, const char* key, const std::string& value) {
  if (value.empty())
    obj.erase(key);
  else
    obj[key] = value;
}

std::string VersionText(const std::string& v) { return v.empty() ? "(none)" : v; }

// What status.servingSpec records of the spec that served: SpecHashInput
// without what kubectl rollout undo does not restore (TemplateSpec keeps the
// spec's), so that scaling or a new autoscaling target records nothing.
json ServedSpec(const ResolvedSpec& pods) {
  json j = SpecHashInput(pods.defaulted, pods.image);
  for (const char* key : {"autoscaling", "strategy", "rollout"}) j.erase(key);
  return j;
}

}  // namespace

VersionStatus VersionStatus::FromStatus(const json* status) {
  VersionStatus s;
  if (status == nullptr || !status->is_object()) return s;
  if (std::string image = text::StringField(*status, "servingImage"); !image.empty()) {
    s.serving = TemplateVersion{text::StringField(*status, "servingVersion"), std::move(image)};
  }
  if (auto it = status->find("servingSpec"); it != status->end() && it->is_object()) s.serving_spec = *it;
  s.serving_generation = IntAt(*status, "servingGeneration");
  s.last_update_time = text::StringField(*status, "lastUpdateTime");
  s.failed_version = text::StringField(*status, "failedVersion");
  s.failed_spec_hash = text::StringField(*status, "failedSpecHash");
  return s;
}

void VersionStatus::WriteTo(json& status) const {
  SetOrErase(status, "servingVersion", serving ? serving->version : "");
  SetOrErase(status, "servingImage", serving ? serving->image : "");
  if (serving_spec.is_object())
    status["servingSpec"] = serving_spec;
  else
    status.erase("servingSpec");
  if (serving_generation > 0)
    status["servingGeneration"] = serving_generation;
  else
    status.erase("servingGeneration");
  SetOrErase(status, "lastUpdateTime", last_update_time);
  SetOrErase(status, "failedVersion", failed_version);
  SetOrErase(status, "failedSpecHash", failed_spec_hash);
}

TemplateVersion WantedTemplate(const ResolvedSpec& spec) { return {spec.version, spec.image}; }

std::optional<TemplateVersion> DeploymentTemplate(const json& deployment) {
  const json& containers = At(At(At(At(deployment, "spec"), "template"), "spec"), "containers");
  if (!containers.is_array()) return std::nullopt;
  for (const auto& c : containers) {
    if (text::StringField(c, "name") != "model") continue;
    TemplateVersion t{"", text::StringField(c, "image")};
    if (const json& env = At(c, "env"); env.is_array()) {
      for (const auto& e : env) {
        if (text::StringField(e, "name") == "MODEL_VERSION") t.version = text::StringField(e, "value");
      }
    }
    return t;
  }
  return std::nullopt;
}

bool RolledBack(const VersionStatus& status, const ResolvedSpec& spec) {
  return status.serving && !status.failed_spec_hash.empty() && status.failed_spec_hash == spec.spec_hash;
}

ResolvedSpec TemplateSpec(const ResolvedSpec& spec, const VersionStatus& status) {
  if (!RolledBack(status, spec)) return spec;
  ResolvedSpec t = spec;
  if (!status.serving_spec.is_object()) {  // recorded before servingSpec was
    t.version = status.serving->version;
    t.image = status.serving->image;
    return t;
  }
  const json ms = {{"metadata", {{"name", spec.name}, {"namespace", spec.ns}, {"uid", spec.uid}}},
                   {"spec", status.serving_spec}};
  t = ResolveSpec(ms, Options{.default_image = status.serving->image});
  t.replicas = spec.replicas;
  t.autoscaling = spec.autoscaling;
  t.hpa = spec.hpa;
  t.strategy_type = spec.strategy_type;
  t.max_surge = spec.max_surge;
  t.max_unavailable = spec.max_unavailable;
  t.rollout_timeout_seconds = spec.rollout_timeout_seconds;
  t.rollback = spec.rollback;
  t.spec_hash = spec.spec_hash;
  return t;
}

std::optional<std::string> RolloutFailure(const json& deployment) {
  const json& status = At(deployment, "status");
  if (IntAt(status, "observedGeneration") < IntAt(At(deployment, "metadata"), "generation")) return std::nullopt;
  const json& conditions = At(status, "conditions");
  if (!conditions.is_array()) return std::nullopt;
  for (const auto& c : conditions) {
    if (text::StringField(c, "type") == "Progressing" && text::StringField(c, "status") == "False" &&
        text::StringField(c, "reason") == "ProgressDeadlineExceeded") {
      std::string message = text::StringField(c, "message");
      return message.empty() ? "the Deployment exceeded its progress deadline" : message;
    }
  }
  return std::nullopt;
}

std::string DescribeChange(const TemplateVersion& from, const TemplateVersion& to) {
  if (from.version == to.version && from.image != to.image) return "image " + from.image + " → " + to.image;
  return "version " + VersionText(from.version) + " → " + VersionText(to.version);
}

VersionOutcome ComputeVersions(const ResolvedSpec& spec, const VersionInput& in, clock::Clock::WallTime now) {
  VersionOutcome out;
  VersionStatus& s = out.status;
  s = VersionStatus::FromStatus(in.current_status);
  const std::optional<TemplateVersion> was_serving = s.serving;  // as recorded before this reconcile
  out.rolled_back = RolledBack(s, spec);
  // The spec the Deployment's template is built from (read before the
  // record below may be dropped).
  const ResolvedSpec pods = TemplateSpec(spec, s);
  if (!out.rolled_back) {  // the spec changed since (or there was no rollback): try it
    s.failed_version.clear();
    s.failed_spec_hash.clear();
  }
  // A completed rollout: its template is what serves, since now.
  if (in.rolled_out && in.deployment != nullptr) {
    const auto t = DeploymentTemplate(*in.deployment);
    if (t && t != s.serving) {
      s.serving = t;
      s.last_update_time = clock::FormatTime(now);
      s.serving_spec = nullptr;  // recorded below when the template is the one `pods` builds
      s.serving_generation = 0;
    }
    // (A rollback recorded before servingSpec was builds on the failed spec:
    // nothing to record from it.)
    if (t && t == WantedTemplate(pods) && !(out.rolled_back && !s.serving_spec.is_object())) {
      json served = ServedSpec(pods);
      const int64_t generation = out.rolled_back ? s.serving_generation : in.generation;
      if (s.serving_spec.is_object() || t != was_serving) {
        if (s.serving_spec != served) {
          s.serving_spec = std::move(served);
          s.serving_generation = generation;
        }
      } else {
        out.backfill_spec = std::move(served);
        out.backfill_generation = generation;
      }
    }
  }
  // A failed one, judged only on a Deployment whose spec is the one wanted
  // (RolloutFailure: one the Deployment controller has seen; a Deployment
  // this reconcile updates has a new generation it has not).
  if (in.deployment != nullptr) out.failure = RolloutFailure(*in.deployment);
  // Remember to roll back (the next reconcile does it, reading this back).
  if (out.failure && !out.rolled_back && spec.rollback == api::RollbackPolicy::kAutomatic && s.serving &&
      WantedTemplate(spec) != *s.serving) {
    s.failed_version = spec.version;
    s.failed_spec_hash = spec.spec_hash;
  }
  return out;
}

}  // namespace ms::modelservice
