#include "api/defaults.h"

#include "api/types.h"
#include "api/validation.h"

namespace ms {

using nlohmann::json;

namespace {

// Applies the defaults to `spec` (in place) while recording the patch ops
// relative to `base` ("/spec").
void DefaultSpec(json& spec, const std::string& base, jsonpatch::Patch& patch) {
  auto add = [&](json& obj, const std::string& obj_path, const char* key, json value) {
    if (obj.contains(key)) return;
    patch.Add(obj_path + "/" + jsonpatch::EscapeToken(key), value);
    obj[key] = std::move(value);
  };

  if (!spec.contains("replicas")) {
    int64_t replicas = api::kDefaultReplicas;
    auto as = spec.find("autoscaling");
    if (as != spec.end() && as->is_object()) {
      auto mn = as->find("minReplicas");
      if (mn != as->end() && mn->is_number_integer() && *mn >= api::kMinReplicas && *mn <= api::kMaxReplicas)
        replicas = mn->get<int64_t>();
    }
    add(spec, base, "replicas", replicas);
  }
  add(spec, base, "port", api::kDefaultPort);
  add(spec, base, "gpus", api::kDefaultGpus);

  if (!spec.contains("strategy")) {
    json strategy = {
        {"type", api::kStrategyRollingUpdate},
        {"rollingUpdate", {{"maxSurge", api::kDefaultMaxSurge}, {"maxUnavailable", api::kDefaultMaxUnavailable}}}};
    add(spec, base, "strategy", strategy);
  } else if (spec["strategy"].is_object()) {
    json& strategy = spec["strategy"];
    const std::string spath = base + "/strategy";
    add(strategy, spath, "type", api::kStrategyRollingUpdate);
    if (strategy["type"] == api::kStrategyRollingUpdate) {
      if (!strategy.contains("rollingUpdate")) {
        add(strategy, spath, "rollingUpdate",
            json{{"maxSurge", api::kDefaultMaxSurge}, {"maxUnavailable", api::kDefaultMaxUnavailable}});
      } else if (strategy["rollingUpdate"].is_object()) {
        json& ru = strategy["rollingUpdate"];
        const std::string rpath = spath + "/rollingUpdate";
        bool surge_given_zero = ru.contains("maxSurge") && IsZeroIntOrPercent(ru["maxSurge"]);
        add(ru, rpath, "maxSurge", api::kDefaultMaxSurge);
        add(ru, rpath, "maxUnavailable", surge_given_zero ? json(1) : json(api::kDefaultMaxUnavailable));
      }
    }
  }

  if (auto as = spec.find("autoscaling"); as != spec.end() && as->is_object())
    add(*as, base + "/autoscaling", "minReplicas", api::kDefaultMinReplicas);
}

}  // namespace

jsonpatch::Patch DefaultsPatch(const json& object) {
  jsonpatch::Patch patch;
  if (!object.is_object()) return patch;
  json copy;
  auto it = object.find("spec");
  if (it == object.end()) {
    patch.Add("/spec", json::object());
    copy = json::object();
  } else if (it->is_object()) {
    copy = *it;
  } else {
    return patch;  // spec of the wrong type: validation denies it
  }
  DefaultSpec(copy, "/spec", patch);
  return patch;
}

json WithDefaults(const json& object) {
  if (!object.is_object()) return object;
  json out = object;
  if (!out.contains("spec")) out["spec"] = json::object();
  if (!out["spec"].is_object()) return out;
  jsonpatch::Patch ignored;
  DefaultSpec(out["spec"], "/spec", ignored);
  return out;
}

}  // namespace ms
