#include "controller/modelservice/pod_fields.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>

#include "controller/modelservice/container_fields.h"
#include "controller/modelservice/owned.h"
#include "shared/api/pod_template.h"
#include "shared/api/quantity.h"
#include "shared/api/value_text.h"

namespace ms::modelservice {

using nlohmann::json;
using Drift = std::vector<std::string>;

namespace {

constexpr const char* kModel = "model";
constexpr const char* kTemplateSpec = "spec.template.spec.";

json& Member(json& obj, const char* key, const json& empty) {
  json& v = obj[key];
  if (v.type() != empty.type()) v = empty;
  return v;
}
json& Obj(json& obj, const char* key) { return Member(obj, key, json::object()); }

// A scheduling value (affinity, topologySpreadConstraints) as the API server
// returns it, in one pass: as Served, and also without the empty lists and
// matchLabels maps it omits (omitempty); an empty selector ({}) stays, as a
// pointer does.
json ServedScheduling(json v) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end();) {
      *it = ServedScheduling(*it);
      const bool omitted = (it->is_string() && it->get_ref<const std::string&>().empty()) ||
                           ((it->is_array() || (it.key() == "matchLabels" && it->is_object())) && it->empty());
      it = omitted ? v.erase(it) : std::next(it);
    }
  } else if (v.is_array()) {
    for (auto& e : v) e = ServedScheduling(e);
  }
  return v;
}

json* ModelContainer(json& pod) {
  for (auto& c : Member(pod, "containers", json::array()))
    if (c.is_object() && c.value("name", "") == kModel) return &c;
  return nullptr;
}

// ---- what the spec asks for ----

bool ControllerEnv(const std::string& name) { return name == api::kEnvModelName || name == api::kEnvModelVersion; }

// The runtime's variables (container_fields.h) and spec.env as the API
// server returns them, without the controller's two.
json SpecEnv(const api::ModelServiceSpec& d) {
  json out = RuntimeEnv(d);
  for (const auto& e : d.env.value_or(std::vector<api::EnvVar>{}))
    if (!ControllerEnv(e.name.value_or(""))) out.push_back(Served(api::ToJsonValue(e)));
  return out;
}

std::map<std::string, std::string> SpecPodLabels(const api::ModelServiceSpec& d) {
  auto labels = d.pod_labels.value_or(std::map<std::string, std::string>{});
  std::erase_if(labels, [](const auto& kv) { return api::IsControllerPodLabel(kv.first); });
  return labels;
}

// spec.podAnnotations, and where the runtime's metrics are (those win).
std::map<std::string, std::string> SpecPodAnnotations(const api::ModelServiceSpec& d) {
  auto annotations = d.pod_annotations.value_or(std::map<std::string, std::string>{});
  for (auto& [k, v] : MetricsAnnotations(d)) annotations[k] = v;
  return annotations;
}

json Keys(const std::map<std::string, std::string>& map) {
  json out = json::array();
  for (const auto& [k, v] : map) out.push_back(k);
  return out;
}

// The kPodKeysAnnotation value for the spec ("" when it has no keys).
std::string KeysRecord(const api::ModelServiceSpec& d) {
  json record = json::object();
  if (auto a = Keys(SpecPodAnnotations(d)); !a.empty()) record["annotations"] = a;
  std::set<std::string> names;
  for (const auto& e : SpecEnv(d)) names.insert(e.value("name", ""));
  if (!names.empty()) record["env"] = names;
  if (auto l = Keys(SpecPodLabels(d)); !l.empty()) record["labels"] = l;
  return record.empty() ? "" : record.dump();
}

// The keys of `member` in the record on `deployment` (none when it is unreadable).
std::set<std::string> Recorded(const json& deployment, const char* member) {
  std::set<std::string> out;
  const json* meta = deployment.contains("metadata") ? &deployment["metadata"] : nullptr;
  if (meta == nullptr || !meta->contains("annotations") || !(*meta)["annotations"].is_object()) return out;
  const json record = json::parse((*meta)["annotations"].value(kPodKeysAnnotation, ""), nullptr, false);
  if (!record.is_object() || !record.contains(member) || !record[member].is_array()) return out;
  for (const auto& k : record[member])
    if (k.is_string()) out.insert(k.get<std::string>());
  return out;
}

json SpecResources(const api::ModelServiceSpec& d, const char* list) {
  json out = json::object();
  if (!d.resources) return out;
  const auto& m = std::string(list) == "limits" ? d.resources->limits : d.resources->requests;
  for (const char* name : api::kResourceNames) {
    if (!m || !m->contains(name)) continue;
    out[name] = m->at(name).text;
  }
  return out;
}

// ---- the pod template ----

// The restricted profile's two, and the user and groups of spec.securityContext (null: none).
json PodSecurityContext(const api::ModelServiceSpec& d) {
  const auto id = [&](std::optional<int64_t> api::PodSecurityContext::*member) {
    return d.security_context && (*d.security_context).*member ? json(*((*d.security_context).*member)) : json();
  };
  return {{"runAsNonRoot", true},
          {"seccompProfile", {{"type", "RuntimeDefault"}}},
          {"runAsUser", id(&api::PodSecurityContext::run_as_user)},
          {"runAsGroup", id(&api::PodSecurityContext::run_as_group)},
          {"fsGroup", id(&api::PodSecurityContext::fs_group)}};
}
json ContainerSecurityContext() {
  return {{"allowPrivilegeEscalation", false}, {"capabilities", {{"drop", json::array({"ALL"})}}}};
}

// The pod spec's members owned whole: each set to what the spec asks for
// (null: no member).
struct WholeMember {
  const char* key;
  json (*want)(const api::ModelServiceSpec&);
};

// A string member: absent when the spec's value is empty or absent.
json StringOrNull(const std::optional<std::string>& v) { return v.value_or("").empty() ? json() : json(*v); }

const std::array kWholeMembers = {
    WholeMember{"nodeSelector",
                [](const api::ModelServiceSpec& d) {
                  return OrNull(api::ToJsonValue(d.node_selector.value_or(std::map<std::string, std::string>{})));
                }},
    WholeMember{
        "tolerations",
        [](const api::ModelServiceSpec& d) { return OrNull(Served(api::ToJsonValue(api::PodTolerations(d)))); }},
    WholeMember{"affinity",
                [](const api::ModelServiceSpec& d) {
                  return d.affinity ? OrNull(ServedScheduling(api::ToJsonValue(*d.affinity))) : json();
                }},
    WholeMember{"topologySpreadConstraints",
                [](const api::ModelServiceSpec& d) {
                  return OrNull(ServedScheduling(api::ToJsonValue(
                      d.topology_spread_constraints.value_or(std::vector<api::TopologySpreadConstraint>{}))));
                }},
    WholeMember{"imagePullSecrets",
                [](const api::ModelServiceSpec& d) {
                  return OrNull(Served(
                      api::ToJsonValue(d.image_pull_secrets.value_or(std::vector<api::LocalObjectReference>{}))));
                }},
    WholeMember{"serviceAccountName",
                [](const api::ModelServiceSpec& d) { return StringOrNull(d.service_account_name); }},
    WholeMember{"priorityClassName",
                [](const api::ModelServiceSpec& d) { return StringOrNull(d.priority_class_name); }},
    WholeMember{"runtimeClassName", [](const api::ModelServiceSpec& d) { return StringOrNull(d.runtime_class_name); }},
    // The API server's default when unset (SetDefaults_PodSpec): 30.
    WholeMember{"terminationGracePeriodSeconds",
                [](const api::ModelServiceSpec& d) { return json(d.termination_grace_period_seconds.value_or(30)); }},
    // No token without a ServiceAccount of the user's (restricted pods).
    WholeMember{"automountServiceAccountToken",
                [](const api::ModelServiceSpec& d) {
                  return d.service_account_name.value_or("").empty() ? json(false) : json();
                }},
};

void OwnPodMembers(const api::ModelServiceSpec& d, json& pod, Drift& drift) {
  const std::string p = kTemplateSpec;
  for (const auto& m : kWholeMembers) Own(pod, m.key, m.want(d), p + m.key, drift);
  // The deprecated serviceAccount, which the API server mirrors from
  // serviceAccountName: removed with it, else left to the API server.
  const json account = StringOrNull(d.service_account_name);
  if (account.is_null() || pod.contains("serviceAccount"))
    Own(pod, "serviceAccount", account, p + "serviceAccountName", drift);
}

// Each member of `want` in obj[key] (created when missing); other members stay.
void OwnMembers(json& obj, const char* key, const json& want, const std::string& field, Drift& drift) {
  json& have = Obj(obj, key);
  for (const auto& [k, v] : want.items()) Own(have, k.c_str(), v, field + "." + k, drift);
}

// Keys of a map owned by key: those of `want`, and the recorded ones that left it.
void OwnKeys(json& obj, const char* key, const std::map<std::string, std::string>& want,
             const std::set<std::string>& recorded, const std::string& field, Drift& drift) {
  json& have = Obj(obj, key);
  for (const auto& k : recorded)
    if (!want.contains(k) && !api::IsControllerPodLabel(k)) Own(have, k.c_str(), json(), field, drift);
  for (const auto& [k, v] : want) Own(have, k.c_str(), v, field, drift);
  if (have.empty()) obj.erase(key);
}

// The variables owned (the controller's two, spec.env's and the recorded
// ones) in order must be MODEL_NAME, MODEL_VERSION (repaired before) and
// spec.env; when not, they are put back so, before the others.
void OwnEnv(const api::ModelServiceSpec& d, const std::set<std::string>& recorded, json& c, Drift& drift) {
  const json spec_env = SpecEnv(d);
  std::set<std::string> owned = recorded;
  for (const auto& e : spec_env) owned.insert(e.value("name", ""));
  json mine = json::array(), others = json::array();
  for (const auto& e : Member(c, "env", json::array())) {
    const std::string name = e.is_object() ? e.value("name", "") : "";
    (ControllerEnv(name) || owned.contains(name) ? mine : others).push_back(e);
  }
  json want = json::array();
  for (const char* name : {api::kEnvModelName, api::kEnvModelVersion})
    for (const auto& e : mine)
      if (e.value("name", "") == name) want.push_back(e);
  want.insert(want.end(), spec_env.begin(), spec_env.end());
  if (mine == want) return;
  want.insert(want.end(), others.begin(), others.end());
  c["env"] = want;
  drift.push_back("env");
}

bool SameQuantity(const json& want, const json& have) {
  const auto text = [](const json& q) { return q.is_string() ? q.get<std::string>() : q.is_number() ? q.dump() : ""; };
  const auto w = api::QuantityValue::Parse(api::Quantity{text(want)});
  const auto h = api::QuantityValue::Parse(api::Quantity{text(have)});
  return w && h && w->Compare(*h) == 0;
}

// requests and limits of cpu, memory and ephemeral-storage, by value.
void OwnResources(const api::ModelServiceSpec& d, json& c, Drift& drift) {
  for (const char* list : {"requests", "limits"}) {
    const json want = SpecResources(d, list);
    const bool has_list = c.contains("resources") && c["resources"].is_object() && c["resources"].contains(list) &&
                          c["resources"][list].is_object();
    if (want.empty() && !has_list) continue;
    json& resources = Obj(c, "resources");
    json& have = Obj(resources, list);
    for (const char* name : api::kResourceNames) {
      const auto w = want.find(name);
      const auto h = have.find(name);
      if (w == want.end() && h == have.end()) continue;
      if (w != want.end() && h != have.end() && SameQuantity(*w, *h)) continue;
      Own(have, name, w == want.end() ? json() : *w, std::string("resources.") + list + "." + name, drift);
    }
    if (have.empty()) resources.erase(list);
  }
}

void OwnContainer(const api::ModelServiceSpec& d, const std::set<std::string>& env_keys, json& c, Drift& drift) {
  OwnContainerFields(d, c, drift);
  OwnEnv(d, env_keys, c, drift);
  OwnResources(d, c, drift);
  OwnMembers(c, "securityContext", ContainerSecurityContext(), "securityContext", drift);
}

}  // namespace

std::vector<std::string> OwnedPodSpecMembers() {
  std::vector<std::string> out = {"securityContext", "serviceAccount", "volumes"};
  for (const auto& m : kWholeMembers) out.emplace_back(m.key);
  return out;
}

void AddPodFields(const api::ModelServiceSpec& d, json& deployment) {
  Drift ignored;
  RepairPodFields(d, deployment, ignored);
}

void RepairPodFields(const api::ModelServiceSpec& d, json& deployment, Drift& drift) {
  json& tmpl = Obj(Obj(deployment, "spec"), "template");
  json& meta = Obj(tmpl, "metadata");
  OwnKeys(meta, "labels", SpecPodLabels(d), Recorded(deployment, "labels"), "spec.template.metadata.labels", drift);
  OwnKeys(meta, "annotations", SpecPodAnnotations(d), Recorded(deployment, "annotations"),
          "spec.template.metadata.annotations", drift);
  json& pod = Obj(tmpl, "spec");
  OwnPodMembers(d, pod, drift);
  OwnVolumes(d, pod, drift);
  OwnMembers(pod, "securityContext", PodSecurityContext(d), std::string(kTemplateSpec) + "securityContext", drift);
  if (json* c = ModelContainer(pod)) OwnContainer(d, Recorded(deployment, "env"), *c, drift);
  // The record of the keys written, last: the repair above read the old one.
  const std::string record = KeysRecord(d);
  json& annotations = Obj(Obj(deployment, "metadata"), "annotations");
  Own(annotations, kPodKeysAnnotation, record.empty() ? json() : json(record),
      std::string("metadata.annotations.") + kPodKeysAnnotation, drift);
  if (annotations.empty()) deployment["metadata"].erase("annotations");
}

}  // namespace ms::modelservice
