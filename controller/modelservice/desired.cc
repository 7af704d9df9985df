#include "controller/modelservice/desired.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "base/json_fields.h"
#include "controller/modelservice/resources.h"

namespace ms::modelservice {

using nlohmann::json;

namespace {

// An int64 of the typed spec as an int (values beyond are invalid anyway).
int ToInt(int64_t v) {
  return static_cast<int>(std::clamp<int64_t>(v, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

int IntOr(const json& obj, const char* key, int def) {
  if (!obj.is_object()) return def;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) return def;
  return it->get<int>();
}

std::string StringOr(const json& obj, const char* key, const std::string& def) {
  if (!obj.is_object()) return def;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return def;
  return it->get<std::string>();
}

json LabelsJson(const std::map<std::string, std::string>& labels) {
  json out = json::object();
  for (const auto& [k, v] : labels) out[k] = v;
  return out;
}

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

void EnsureOwnerReference(json& meta, const ModelServiceSpec& spec, Drift& drift) {
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

json GpuQuantity(int gpus) { return std::to_string(gpus); }

bool SameQuantity(const json& have, int gpus) {
  if (have.is_string()) return have.get<std::string>() == std::to_string(gpus);
  if (have.is_number_integer()) return have.get<long long>() == gpus;
  return false;
}

json DesiredContainer(const ModelServiceSpec& spec) {
  json env = json::array({{{"name", "MODEL_NAME"}, {"value", spec.model}}});
  json version = {{"name", "MODEL_VERSION"}};
  if (!spec.version.empty()) version["value"] = spec.version;
  env.push_back(version);
  json c = {{"name", "model"},
            {"image", spec.image},
            {"env", env},
            {"ports", json::array({{{"name", "http"}, {"containerPort", spec.port}, {"protocol", "TCP"}}})},
            {"readinessProbe", {{"httpGet", {{"path", "/healthz"}, {"port", "http"}}}}}};
  if (spec.gpus > 0) {
    c["resources"] = {{"limits", {{"nvidia.com/gpu", GpuQuantity(spec.gpus)}}}};
  } else {
    c["resources"] = json::object();
  }
  return c;
}

json DesiredStrategy(const ModelServiceSpec& spec) {
  if (spec.strategy_type == api::StrategyType::kRecreate) return {{"type", api::kStrategyRecreate}};
  return {
      {"type", api::kStrategyRollingUpdate},
      {"rollingUpdate", {{"maxSurge", spec.max_surge.ToJson()}, {"maxUnavailable", spec.max_unavailable.ToJson()}}}};
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

void EnsureContainer(const ModelServiceSpec& spec, json& podspec, Drift& drift) {
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

  // containerPort `port` named http.
  json& ports = ArrayAt(*c, "ports");
  bool found = false;
  for (auto& p : ports) {
    if (!p.is_object() || p.value("name", "") != "http") continue;
    found = true;
    Ensure(p, "containerPort", spec.port, "containerPort", drift);
  }
  if (!found) {
    ports.push_back({{"name", "http"}, {"containerPort", spec.port}, {"protocol", "TCP"}});
    drift.push_back("containerPort");
  }

  // resources.limits["nvidia.com/gpu"]: = gpus when > 0, absent when 0.
  static const char* kGpu = "nvidia.com/gpu";
  const json* limits = nullptr;
  if (c->contains("resources") && (*c)["resources"].is_object() && (*c)["resources"].contains("limits") &&
      (*c)["resources"]["limits"].is_object()) {
    limits = &(*c)["resources"]["limits"];
  }
  const bool has = limits != nullptr && limits->contains(kGpu);
  if (spec.gpus > 0 && (!has || !SameQuantity((*limits)[kGpu], spec.gpus))) {
    json& res = ObjectAt(*c, "resources");
    ObjectAt(res, "limits")[kGpu] = GpuQuantity(spec.gpus);
    // Requests of an extended resource must equal its limit.
    if (res.contains("requests") && res["requests"].is_object() && res["requests"].contains(kGpu)) {
      res["requests"][kGpu] = GpuQuantity(spec.gpus);
    }
    drift.push_back("resources.limits.nvidia.com/gpu");
  } else if (spec.gpus == 0 && has) {
    json& res = (*c)["resources"];
    res["limits"].erase(kGpu);
    if (res["limits"].empty()) res.erase("limits");
    if (res.contains("requests") && res["requests"].is_object()) {
      res["requests"].erase(kGpu);
      if (res["requests"].empty()) res.erase("requests");
    }
    drift.push_back("resources.limits.nvidia.com/gpu");
  }

  // readinessProbe: HTTP GET /healthz on http; no other handler.
  bool probe_ok = false;
  if (c->contains("readinessProbe") && (*c)["readinessProbe"].is_object()) {
    const json& p = (*c)["readinessProbe"];
    probe_ok = p.contains("httpGet") && p["httpGet"].is_object() && p["httpGet"].value("path", "") == "/healthz" &&
               p["httpGet"].contains("port") && p["httpGet"]["port"] == "http" && !p.contains("exec") &&
               !p.contains("tcpSocket") && !p.contains("grpc");
  }
  if (!probe_ok) {
    json& p = ObjectAt(*c, "readinessProbe");
    p.erase("exec");
    p.erase("tcpSocket");
    p.erase("grpc");
    json& get = ObjectAt(p, "httpGet");
    get["path"] = "/healthz";
    get["port"] = "http";
    drift.push_back("readinessProbe");
  }
}

}  // namespace

ModelServiceSpec ParseSpec(const json& ms, const Options& opts) {
  ModelServiceSpec s;
  const json empty = json::object();
  const json& meta = ms.contains("metadata") && ms["metadata"].is_object() ? ms["metadata"] : empty;
  s.name = StringOr(meta, "name", "");
  s.ns = StringOr(meta, "namespace", "default");
  s.uid = StringOr(meta, "uid", "");

  const api::ModelServiceSpec d = api::ParseModelService(ms).spec.Defaulted();
  s.model = d.model.value_or("");
  s.version = d.version.value_or("");
  s.image = d.image && !d.image->empty() ? *d.image : opts.default_image;
  s.replicas = std::max(1, ToInt(*d.replicas));
  s.port = ToInt(*d.port);
  s.gpus = std::max(0, ToInt(*d.gpus));
  s.strategy_type = *d.strategy->type;
  if (const auto& ru = d.strategy->rolling_update; ru && s.strategy_type == api::StrategyType::kRollingUpdate) {
    s.max_surge = *ru->max_surge;
    s.max_unavailable = *ru->max_unavailable;
  }
  s.rollout_timeout_seconds =
      ToInt(std::clamp(*d.rollout->timeout_seconds, api::kMinRolloutTimeoutSeconds, api::kMaxRolloutTimeoutSeconds));
  s.rollback = *d.rollout->rollback;
  s.spec_hash = SpecHash(d, s.image);
  if (const auto& a = d.autoscaling) {
    autoscale::Spec as;
    as.min_replicas = std::max(1, ToInt(*a->min_replicas));
    as.max_replicas = std::max(as.min_replicas, ToInt(a->max_replicas.value_or(as.min_replicas)));
    as.target_queue_length = std::max(1, ToInt(a->target_queue_length.value_or(1)));
    s.autoscaling = as;
    s.hpa = a->mode == api::AutoscalingMode::kHPA;
  }
  return s;
}

namespace {
// Takes out of `j` every member equal to the same member of `defaults`, in
// nested objects too. An object left empty goes too when every spec has it
// (it is in `bare`, the defaults of an empty spec), and stays as {} when not
// (spec.autoscaling: present with its defaults only is not absent).
void DropDefaults(json& j, const json& defaults, const json& bare) {
  for (auto it = j.begin(); it != j.end();) {
    const auto d = defaults.find(it.key());
    const auto b = bare.is_object() ? bare.find(it.key()) : bare.end();
    const bool always = bare.is_object() && b != bare.end();
    if (d != defaults.end() && it->is_object() && d->is_object()) {
      DropDefaults(*it, *d, always ? *b : json());
      if (it->empty() && always) {
        it = j.erase(it);
        continue;
      }
    } else if (d != defaults.end() && *it == *d) {
      it = j.erase(it);
      continue;
    }
    ++it;
  }
}
}  // namespace

json SpecHashInput(const api::ModelServiceSpec& defaulted, const std::string& image) {
  // Every default, nested blocks included; and what an empty spec gets.
  static const json kDefaults =
      api::ParseSpec({{"strategy", json::object()}, {"autoscaling", json::object()}, {"rollout", json::object()}})
          .spec.Defaulted()
          .ToJson();
  static const json kBare = api::ParseSpec(json::object()).spec.Defaulted().ToJson();
  json j = defaulted.ToJson();
  DropDefaults(j, kDefaults, kBare);
  j.erase("replicas");
  j["image"] = image;
  return j;
}

std::string SpecHash(const api::ModelServiceSpec& defaulted, const std::string& image) {
  const json j = SpecHashInput(defaulted, image);
  uint64_t h = 14695981039346656037ULL;  // FNV-1a 64
  for (const unsigned char c : j.dump()) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

json OwnerReference(const ModelServiceSpec& spec) {
  return {{"apiVersion", api::kApiVersion},
          {"kind", api::kKind},
          {"name", spec.name},
          {"uid", spec.uid},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

namespace {
// The metadata of every object the ModelService owns: its name and
// namespace, the instance labels, the controller ownerReference.
json OwnedMetadata(const ModelServiceSpec& spec) {
  return {{"name", spec.name},
          {"namespace", spec.ns},
          {"labels", LabelsJson(InstanceLabels(spec.name))},
          {"ownerReferences", json::array({OwnerReference(spec)})}};
}
}  // namespace

json DesiredDeployment(const ModelServiceSpec& spec, int replicas) {
  const json labels = LabelsJson(InstanceLabels(spec.name));
  return {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", OwnedMetadata(spec)},
      {"spec",
       {{"replicas", replicas},
        {"progressDeadlineSeconds", spec.rollout_timeout_seconds},
        {"selector", {{"matchLabels", LabelsJson(SelectorLabels(spec.name))}}},
        {"strategy", DesiredStrategy(spec)},
        {"template",
         {{"metadata", {{"labels", labels}}}, {"spec", {{"containers", json::array({DesiredContainer(spec)})}}}}}}}};
}

std::string SelectorString(const ModelServiceSpec& spec) {
  std::string out;
  for (const auto& [k, v] : SelectorLabels(spec.name)) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

json DesiredService(const ModelServiceSpec& spec) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", OwnedMetadata(spec)},
          {"spec",
           {{"type", "ClusterIP"},
            {"selector", LabelsJson(SelectorLabels(spec.name))},
            {"ports",
             json::array({{{"name", "http"}, {"port", spec.port}, {"targetPort", "http"}, {"protocol", "TCP"}}})}}}};
}

Drift RepairDeployment(const ModelServiceSpec& spec, int replicas, json& current) {
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
          ? strategy.value("type", "") == api::kStrategyRecreate && !strategy.contains("rollingUpdate")
          : strategy.value("type", "") == api::kStrategyRollingUpdate && strategy.contains("rollingUpdate") &&
                strategy["rollingUpdate"].is_object() &&
                strategy["rollingUpdate"].value("maxSurge", json()) == want["rollingUpdate"]["maxSurge"] &&
                strategy["rollingUpdate"].value("maxUnavailable", json()) == want["rollingUpdate"]["maxUnavailable"];
  if (!strategy_ok) {
    strategy = want;
    drift.push_back("spec.strategy");
  }

  json& tmpl = ObjectAt(dspec, "template");
  EnsureLabels(ObjectAt(tmpl, "metadata"), InstanceLabels(spec.name), "spec.template.metadata.labels", drift);
  EnsureContainer(spec, ObjectAt(tmpl, "spec"), drift);
  return drift;
}

Drift RepairService(const ModelServiceSpec& spec, json& current) {
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

  json& ports = ArrayAt(sspec, "ports");
  bool found = false;
  for (auto& p : ports) {
    if (!p.is_object() || p.value("name", "") != "http") continue;
    found = true;
    Ensure(p, "port", spec.port, "spec.ports", drift);
    Ensure(p, "targetPort", "http", "spec.ports", drift);
  }
  if (!found) {
    ports.push_back({{"name", "http"}, {"port", spec.port}, {"targetPort", "http"}, {"protocol", "TCP"}});
    drift.push_back("spec.ports");
  }
  // Several fields may report the same path; keep each once.
  drift.erase(std::unique(drift.begin(), drift.end()), drift.end());
  return drift;
}

int DeploymentReplicas(const json& deployment) {
  if (deployment.contains("spec") && deployment["spec"].is_object()) return IntOr(deployment["spec"], "replicas", 1);
  return 1;
}

// ---- Autoscaling mode HPA (issue 15 part 3) ----

namespace {

json HpaMetrics(const ModelServiceSpec& spec) {
  const int t = spec.autoscaling ? spec.autoscaling->target_queue_length : 1;
  return json::array(
      {{{"type", "External"},
        {"external",
         {{"metric", {{"name", kQueueLengthMetric}, {"selector", {{"matchLabels", {{"modelservice", spec.name}}}}}}},
          {"target", {{"type", "AverageValue"}, {"averageValue", std::to_string(t)}}}}}}});
}

json ScaleTargetRef(const ModelServiceSpec& spec) {
  return {{"apiVersion", api::kApiVersion}, {"kind", api::kKind}, {"name", spec.name}};
}

// The metrics list says what HpaMetrics says: one External metric, same
// name and selector, target AverageValue of the same quantity, nothing else.
bool SameMetrics(const json& have, const json& want) {
  if (!have.is_array() || have.size() != 1 || !have[0].is_object()) return false;
  const json& m = have[0];
  const json& w = want[0];
  if (StringField(m, "type") != "External" || !m.contains("external") || !m["external"].is_object()) return false;
  if (m.size() != 2) return false;  // another source (resource, pods, ...) set beside it
  const json& e = m["external"];
  if (!e.contains("metric") || e["metric"] != w["external"]["metric"]) return false;
  if (!e.contains("target") || !e["target"].is_object()) return false;
  const json& t = e["target"];
  if (StringField(t, "type") != "AverageValue" || t.contains("value") || t.contains("averageUtilization")) return false;
  if (!t.contains("averageValue") || !t["averageValue"].is_string()) return false;
  const auto have_q = ParseQuantity(t["averageValue"].get<std::string>());
  const auto want_q = ParseQuantity(w["external"]["target"]["averageValue"].get<std::string>());
  return have_q && want_q && std::fabs(*have_q - *want_q) <= 1e-9 * std::max(1.0, std::fabs(*want_q));
}

}  // namespace

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

json DesiredHorizontalPodAutoscaler(const ModelServiceSpec& spec, const Options& opts) {
  const autoscale::Spec as = spec.autoscaling.value_or(autoscale::Spec{});
  return {
      {"apiVersion", "autoscaling/v2"},
      {"kind", "HorizontalPodAutoscaler"},
      {"metadata", OwnedMetadata(spec)},
      {"spec",
       {{"scaleTargetRef", ScaleTargetRef(spec)},
        {"minReplicas", as.min_replicas},
        {"maxReplicas", as.max_replicas},
        {"metrics", HpaMetrics(spec)},
        {"behavior", {{"scaleDown", {{"stabilizationWindowSeconds", opts.hpa_scale_down_stabilization_seconds}}}}}}}};
}

Drift RepairHorizontalPodAutoscaler(const ModelServiceSpec& spec, const Options& opts, json& current) {
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
