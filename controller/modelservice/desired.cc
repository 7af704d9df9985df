#include "controller/modelservice/desired.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string_view>

#include "controller/modelservice/desired_parts.h"
#include "controller/modelservice/pod_fields.h"
#include "controller/modelservice/resources.h"
#include "shared/text/json_fields.h"

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

}  // namespace

json GpuQuantity(int gpus) { return std::to_string(gpus); }

json LabelsJson(const std::map<std::string, std::string>& labels) {
  json out = json::object();
  for (const auto& [k, v] : labels) out[k] = v;
  return out;
}

json DesiredContainer(const ResolvedSpec& spec) {
  json env = json::array({{{"name", "MODEL_NAME"}, {"value", spec.model}}});
  json version = {{"name", "MODEL_VERSION"}};
  if (!spec.version.empty()) version["value"] = spec.version;
  env.push_back(version);
  // Ports, probes, command and args: container_fields.h (added by AddPodFields).
  json c = {{"name", "model"}, {"image", spec.image}, {"env", env}};
  if (spec.gpus > 0) {
    c["resources"] = {{"limits", {{"nvidia.com/gpu", GpuQuantity(spec.gpus)}}}};
  } else {
    c["resources"] = json::object();
  }
  return c;
}

json DesiredStrategy(const ResolvedSpec& spec) {
  if (spec.strategy_type == api::StrategyType::kRecreate)
    return {{"type", api::ToString(api::StrategyType::kRecreate)}};
  return {
      {"type", api::ToString(api::StrategyType::kRollingUpdate)},
      {"rollingUpdate",
       {{"maxSurge", api::ToJsonValue(spec.max_surge)}, {"maxUnavailable", api::ToJsonValue(spec.max_unavailable)}}}};
}

ResolvedSpec ResolveSpec(const json& ms, const Options& opts) {
  ResolvedSpec s;
  const json empty = json::object();
  const json& meta = ms.contains("metadata") && ms["metadata"].is_object() ? ms["metadata"] : empty;
  s.name = text::StringField(meta, "name");
  s.ns = text::StringField(meta, "namespace", "default");
  s.uid = text::StringField(meta, "uid");

  s.defaulted = api::ParseModelService(ms).spec.Defaulted();
  const api::ModelServiceSpec& d = s.defaulted;
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
  s.rollout_timeout_seconds = ToInt(
      std::clamp(*d.rollout->timeout_seconds, api::Rollout::kTimeoutSeconds.min, api::Rollout::kTimeoutSeconds.max));
  s.rollback = *d.rollout->rollback;
  s.spec_hash = SpecHash(d, s.image);
  if (const auto& a = d.autoscaling) {
    autoscale::Spec as;
    as.min_replicas = std::max(1, ToInt(*a->min_replicas));
    as.max_replicas = std::max(as.min_replicas, ToInt(a->max_replicas.value_or(as.min_replicas)));
    as.target_queue_length = std::max(1, ToInt(a->target_queue_length.value_or(1)));
    as.target_gpu_utilization = std::clamp(ToInt(a->target_gpu_utilization.value_or(0)), 0, 100);
    as.queue_query = static_cast<size_t>(d.runtime.value_or(api::Runtime::kCustom));
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
  static const json kDefaults = api::ToJsonValue(
      api::ParseSpec(json{{"strategy", json::object()}, {"autoscaling", json::object()}, {"rollout", json::object()}})
          .spec.Defaulted());
  static const json kBare = api::ToJsonValue(api::ParseSpec(json::object()).spec.Defaulted());
  json j = api::ToJsonValue(defaulted);
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

json OwnerReference(const ResolvedSpec& spec) {
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
json OwnedMetadata(const ResolvedSpec& spec) {
  return {{"name", spec.name},
          {"namespace", spec.ns},
          {"labels", LabelsJson(InstanceLabels(spec.name))},
          {"ownerReferences", json::array({OwnerReference(spec)})}};
}
}  // namespace

json DesiredDeployment(const ResolvedSpec& spec, int replicas) {
  const json labels = LabelsJson(InstanceLabels(spec.name));
  json deployment = {
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
  AddPodFields(spec.defaulted, deployment);
  return deployment;
}

std::string SelectorString(const ResolvedSpec& spec) {
  std::string out;
  for (const auto& [k, v] : SelectorLabels(spec.name)) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

json DesiredService(const ResolvedSpec& spec) {
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", OwnedMetadata(spec)},
          {"spec",
           {{"type", "ClusterIP"},
            {"selector", LabelsJson(SelectorLabels(spec.name))},
            {"ports",
             json::array({{{"name", "http"}, {"port", spec.port}, {"targetPort", "http"}, {"protocol", "TCP"}}})}}}};
}

int DeploymentReplicas(const json& deployment) {
  if (deployment.contains("spec") && deployment["spec"].is_object()) return IntOr(deployment["spec"], "replicas", 1);
  return 1;
}

// ---- Autoscaling mode HPA (issue 15 part 3) ----

namespace {

json ExternalMetric(const ResolvedSpec& spec, const char* name, const char* target_type, int target) {
  const char* field = std::string_view(target_type) == "Value" ? "value" : "averageValue";
  return {{"type", "External"},
          {"external",
           {{"metric", {{"name", name}, {"selector", {{"matchLabels", {{"modelservice", spec.name}}}}}}},
            {"target", {{"type", target_type}, {field, std::to_string(target)}}}}}};
}

}  // namespace

json HpaMetrics(const ResolvedSpec& spec) {
  const autoscale::Spec as = spec.autoscaling.value_or(autoscale::Spec{});
  json metrics = json::array({ExternalMetric(spec, kQueueLengthMetric, "AverageValue", as.target_queue_length)});
  if (as.target_gpu_utilization > 0)
    metrics.push_back(ExternalMetric(spec, kGpuUtilizationMetric, "Value", as.target_gpu_utilization));
  return metrics;
}

json ScaleTargetRef(const ResolvedSpec& spec) {
  return {{"apiVersion", api::kApiVersion}, {"kind", api::kKind}, {"name", spec.name}};
}

json DesiredHorizontalPodAutoscaler(const ResolvedSpec& spec, const Options& opts) {
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

}  // namespace ms::modelservice
