// The repair of the objects a ModelService owns (desired.h): only the fields
// the controller owns are set on the object the API server returned, and
// each one that differed is reported; everything else is left alone.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <initializer_list>

#include "controller/modelservice/desired.h"
#include "controller/modelservice/desired_parts.h"
#include "controller/modelservice/pod_fields.h"
#include "controller/modelservice/resources.h"
#include "shared/text/json_fields.h"

namespace ms::modelservice {

using nlohmann::json;

namespace {

// A JSON object at `obj[key]`, created when missing or not an object.
json& ObjectAt(json& obj, const char* key) {
  json& v = obj[key];
  if (!v.is_object()) v = json::object();
  return v;
}
json& ArrayAt(json& obj, const char* key) {
  json& v = obj[key];
  if (!v.is_array()) v = json::array();
  return v;
}

// Sets obj[key] = value when different; records `field`.
void Ensure(json& obj, const char* key, const json& value, const std::string& field, Drift& drift) {
  auto it = obj.find(key);
  if (it != obj.end() && *it == value) return;
  obj[key] = value;
  drift.push_back(field);
}

void EnsureLabels(json& meta, const std::map<std::string, std::string>& want, const std::string& field, Drift& drift) {
  const json* labels = meta.contains("labels") && meta["labels"].is_object() ? &meta["labels"] : nullptr;
  bool ok = labels != nullptr;
  if (ok) {
    for (const auto& [k, v] : want) {
      auto it = labels->find(k);
      if (it == labels->end() || *it != v) ok = false;
    }
  }
  if (ok) return;
  json& l = ObjectAt(meta, "labels");
  for (const auto& [k, v] : want) l[k] = v;
  drift.push_back(field);
}

void EnsureOwnerReference(json& meta, const ResolvedSpec& spec, Drift& drift) {
  const json want = OwnerReference(spec);
  json& refs = ArrayAt(meta, "ownerReferences");
  for (auto& ref : refs) {
    if (ref.is_object() && ref.value("uid", "") == spec.uid) {
      if (ref != want) {
        ref = want;
        drift.push_back("metadata.ownerReferences");
      }
      return;
    }
  }
  refs.push_back(want);
  drift.push_back("metadata.ownerReferences");
}

bool SameQuantity(const json& have, int gpus) {
  if (have.is_string()) return have.get<std::string>() == std::to_string(gpus);
  if (have.is_number_integer()) return have.get<long long>() == gpus;
  return false;
}

void EnsureEnv(json& container, const std::string& name, const std::string& value, Drift& drift) {
  json& env = ArrayAt(container, "env");
  for (auto& e : env) {
    if (!e.is_object() || e.value("name", "") != name) continue;
    // An empty value is omitted by the API server.
    const bool same = !e.contains("valueFrom") && (e.contains("value") ? e["value"] == value : value.empty());
    if (!same) {
      e = json{{"name", name}};
      if (!value.empty()) e["value"] = value;
      drift.push_back("env." + name);
    }
    return;
  }
  json e = {{"name", name}};
  if (!value.empty()) e["value"] = value;
  env.push_back(e);
  drift.push_back("env." + name);
}

// The ports named http in `ports`: their `owned` members as in `want` (the
// rest left alone), or `want` added when there is none.
void EnsureHttpPort(json& ports, const json& want, std::initializer_list<const char*> owned, const std::string& field,
                    Drift& drift) {
  bool found = false;
  for (auto& p : ports) {
    if (!p.is_object() || p.value("name", "") != "http") continue;
    found = true;
    for (const char* key : owned) Ensure(p, key, want.at(key), field, drift);
  }
  if (!found) {
    ports.push_back(want);
    drift.push_back(field);
  }
}

// resources.limits["nvidia.com/gpu"]: = gpus when > 0, absent when 0.
void EnsureGpuLimit(const ResolvedSpec& spec, json& c, Drift& drift) {
  static const char* kGpu = "nvidia.com/gpu";
  const json* limits = nullptr;
  if (c.contains("resources") && c["resources"].is_object() && c["resources"].contains("limits") &&
      c["resources"]["limits"].is_object()) {
    limits = &c["resources"]["limits"];
  }
  const bool has = limits != nullptr && limits->contains(kGpu);
  if (spec.gpus > 0 && (!has || !SameQuantity((*limits)[kGpu], spec.gpus))) {
    json& res = ObjectAt(c, "resources");
    ObjectAt(res, "limits")[kGpu] = GpuQuantity(spec.gpus);
    // Requests of an extended resource must equal its limit.
    if (res.contains("requests") && res["requests"].is_object() && res["requests"].contains(kGpu)) {
      res["requests"][kGpu] = GpuQuantity(spec.gpus);
    }
    drift.push_back("resources.limits.nvidia.com/gpu");
  } else if (spec.gpus == 0 && has) {
    json& res = c["resources"];
    res["limits"].erase(kGpu);
    if (res["limits"].empty()) res.erase("limits");
    if (res.contains("requests") && res["requests"].is_object()) {
      res["requests"].erase(kGpu);
      if (res["requests"].empty()) res.erase("requests");
    }
    drift.push_back("resources.limits.nvidia.com/gpu");
  }
}

void EnsureContainer(const ResolvedSpec& spec, json& podspec, Drift& drift) {
  json& containers = ArrayAt(podspec, "containers");
  json* c = nullptr;
  for (auto& candidate : containers) {
    if (candidate.is_object() && candidate.value("name", "") == "model") c = &candidate;
  }
  if (c == nullptr) {
    containers.push_back(DesiredContainer(spec));
    drift.push_back("container model");
    return;
  }
  Ensure(*c, "image", spec.image, "image", drift);
  EnsureEnv(*c, "MODEL_NAME", spec.model, drift);
  EnsureEnv(*c, "MODEL_VERSION", spec.version, drift);
  EnsureGpuLimit(spec, *c, drift);
}

// One metric says what `w` (of HpaMetrics) says: External, same name and
// selector, the same target type with the same quantity, nothing else.
bool SameMetric(const json& m, const json& w) {
  if (!m.is_object() || text::StringField(m, "type") != "External" || !m.contains("external") ||
      !m["external"].is_object())
    return false;
  if (m.size() != 2) return false;  // another source (resource, pods, ...) set beside it
  const json& e = m["external"];
  if (!e.contains("metric") || e["metric"] != w["external"]["metric"]) return false;
  if (!e.contains("target") || !e["target"].is_object()) return false;
  const json& t = e["target"];
  const json& wt = w["external"]["target"];
  const std::string type = text::StringField(wt, "type");
  const char* field = type == "Value" ? "value" : "averageValue";
  if (text::StringField(t, "type") != type || t.size() != 2 || !t.contains(field) || !t[field].is_string())
    return false;
  const auto have_q = ParseQuantity(t[field].get<std::string>());
  const auto want_q = ParseQuantity(wt[field].get<std::string>());
  return have_q && want_q && std::fabs(*have_q - *want_q) <= 1e-9 * std::max(1.0, std::fabs(*want_q));
}

// The metrics list says what HpaMetrics says, in its order, nothing else.
bool SameMetrics(const json& have, const json& want) {
  if (!have.is_array() || have.size() != want.size()) return false;
  for (size_t i = 0; i < want.size(); ++i)
    if (!SameMetric(have[i], want[i])) return false;
  return true;
}

}  // namespace

Drift RepairDeployment(const ResolvedSpec& spec, int replicas, json& current) {
  Drift drift;
  json& meta = ObjectAt(current, "metadata");
  EnsureLabels(meta, InstanceLabels(spec.name), "metadata.labels", drift);
  EnsureOwnerReference(meta, spec, drift);

  json& dspec = ObjectAt(current, "spec");
  Ensure(dspec, "replicas", replicas, "spec.replicas", drift);
  Ensure(dspec, "progressDeadlineSeconds", spec.rollout_timeout_seconds, "spec.progressDeadlineSeconds", drift);

  json& strategy = ObjectAt(dspec, "strategy");
  const json want = DesiredStrategy(spec);
  const bool strategy_ok =
      spec.strategy_type == api::StrategyType::kRecreate
          ? strategy.value("type", "") == api::ToString(api::StrategyType::kRecreate) &&
                !strategy.contains("rollingUpdate")
          : strategy.value("type", "") == api::ToString(api::StrategyType::kRollingUpdate) &&
                strategy.contains("rollingUpdate") && strategy["rollingUpdate"].is_object() &&
                strategy["rollingUpdate"].value("maxSurge", json()) == want["rollingUpdate"]["maxSurge"] &&
                strategy["rollingUpdate"].value("maxUnavailable", json()) == want["rollingUpdate"]["maxUnavailable"];
  if (!strategy_ok) {
    strategy = want;
    drift.push_back("spec.strategy");
  }

  json& tmpl = ObjectAt(dspec, "template");
  EnsureLabels(ObjectAt(tmpl, "metadata"), InstanceLabels(spec.name), "spec.template.metadata.labels", drift);
  EnsureContainer(spec, ObjectAt(tmpl, "spec"), drift);
  RepairPodFields(spec.defaulted, current, drift);
  return drift;
}

Drift RepairService(const ResolvedSpec& spec, json& current) {
  Drift drift;
  json& meta = ObjectAt(current, "metadata");
  EnsureLabels(meta, InstanceLabels(spec.name), "metadata.labels", drift);
  EnsureOwnerReference(meta, spec, drift);

  json& sspec = ObjectAt(current, "spec");
  if (sspec.value("type", "ClusterIP") != "ClusterIP") {
    sspec["type"] = "ClusterIP";
    drift.push_back("spec.type");
  }
  Ensure(sspec, "selector", LabelsJson(SelectorLabels(spec.name)), "spec.selector", drift);

  EnsureHttpPort(ArrayAt(sspec, "ports"),
                 {{"name", "http"}, {"port", spec.port}, {"targetPort", "http"}, {"protocol", "TCP"}},
                 {"port", "targetPort"}, "spec.ports", drift);
  // Several fields may report the same path; keep each once.
  drift.erase(std::unique(drift.begin(), drift.end()), drift.end());
  return drift;
}

std::optional<double> ParseQuantity(const std::string& q) {
  const char* begin = q.data();
  const char* end = q.data() + q.size();
  double sign = 1;
  if (begin != end && (*begin == '+' || *begin == '-')) {
    if (*begin == '-') sign = -1;
    ++begin;
  }
  if (begin == end || !(std::isdigit(static_cast<unsigned char>(*begin)) || *begin == '.')) return std::nullopt;
  double number = 0;
  auto [ptr, ec] = std::from_chars(begin, end, number, std::chars_format::general);
  if (ec != std::errc()) return std::nullopt;
  static const std::pair<const char*, double> kSuffixes[] = {
      {"", 1},        {"n", 1e-9},    {"u", 1e-6},    {"m", 1e-3},   {"k", 1e3},     {"M", 1e6},
      {"G", 1e9},     {"T", 1e12},    {"P", 1e15},    {"E", 1e18},   {"Ki", 0x1p10}, {"Mi", 0x1p20},
      {"Gi", 0x1p30}, {"Ti", 0x1p40}, {"Pi", 0x1p50}, {"Ei", 0x1p60}};
  const std::string_view suffix(ptr, static_cast<size_t>(end - ptr));
  for (const auto& [name, factor] : kSuffixes) {
    if (suffix == name) return sign * number * factor;
  }
  return std::nullopt;
}

Drift RepairHorizontalPodAutoscaler(const ResolvedSpec& spec, const Options& opts, json& current) {
  Drift drift;
  const autoscale::Spec as = spec.autoscaling.value_or(autoscale::Spec{});
  json& meta = ObjectAt(current, "metadata");
  EnsureLabels(meta, InstanceLabels(spec.name), "metadata.labels", drift);
  EnsureOwnerReference(meta, spec, drift);

  json& hspec = ObjectAt(current, "spec");
  Ensure(hspec, "scaleTargetRef", ScaleTargetRef(spec), "spec.scaleTargetRef", drift);
  Ensure(hspec, "minReplicas", as.min_replicas, "spec.minReplicas", drift);
  Ensure(hspec, "maxReplicas", as.max_replicas, "spec.maxReplicas", drift);
  const json metrics = HpaMetrics(spec);
  if (!SameMetrics(hspec.value("metrics", json()), metrics)) {
    hspec["metrics"] = metrics;
    drift.push_back("spec.metrics");
  }
  // Only the scale-down window is ours; the API server fills in the policies.
  json& scale_down = ObjectAt(ObjectAt(hspec, "behavior"), "scaleDown");
  Ensure(scale_down, "stabilizationWindowSeconds", opts.hpa_scale_down_stabilization_seconds,
         "spec.behavior.scaleDown.stabilizationWindowSeconds", drift);
  return drift;
}

}  // namespace ms::modelservice
