#include "controller/modelservice/container_fields.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <utility>

#include "controller/modelservice/owned.h"
#include "shared/api/quantity.h"
#include "shared/api/runtimes.h"
#include "shared/api/value_text.h"

namespace ms::modelservice {

using nlohmann::json;
using Drift = std::vector<std::string>;

namespace {

constexpr const char* kShmVolume = "dshm";
constexpr const char* kShmPath = "/dev/shm";
constexpr int64_t kSecretDefaultMode = 0644;  // the API server's default (420)

// A quantity as the API server writes it back (canonical), or as written
// when it does not parse.
json CanonicalQuantity(const api::Quantity& q) {
  const auto v = api::QuantityValue::Parse(q);
  return v ? json(v->Canonical()) : api::ToJsonValue(q);
}

// A probe as the API server returns it (SetDefaults_Probe,
// SetDefaults_HTTPGetAction): path "/" and scheme HTTP when unset, the
// timings' defaults, initialDelaySeconds 0 omitted.
json ServedProbe(const api::Probe& probe) {
  json p = Served(api::ToJsonValue(probe));
  if (p.contains("httpGet")) {
    json& get = p["httpGet"];
    if (!get.contains("path")) get["path"] = "/";
    if (!get.contains("scheme")) get["scheme"] = "HTTP";
  }
  for (const auto& [key, value] :
       {std::pair{"timeoutSeconds", 1}, {"periodSeconds", 10}, {"successThreshold", 1}, {"failureThreshold", 3}})
    if (!p.contains(key)) p[key] = value;
  if (p.value("initialDelaySeconds", 0) == 0) p.erase("initialDelaySeconds");
  return p;
}

json WantProbe(const std::optional<api::Probe>& spec, const std::optional<api::Probe>& preset) {
  const auto& probe = spec ? spec : preset;
  return probe ? ServedProbe(*probe) : json();
}

json PortJson(const std::string& name, int64_t number, api::Protocol protocol) {
  return {{"name", name}, {"containerPort", number}, {"protocol", api::ToString(protocol)}};
}

// http, then the runtime's ports with spec.ports over them by name, then
// the rest of spec.ports.
json WantPorts(const api::ModelServiceSpec& d) {
  const auto& preset = api::PresetOf(d);
  const auto spec_ports = d.ports.value_or(std::vector<api::ContainerPort>{});
  json out = json::array({PortJson("http", *d.port, api::Protocol::kTCP)});
  std::set<std::string> taken;
  const auto add = [&](const api::ContainerPort& p) {
    out.push_back(PortJson(*p.name, *p.container_port, p.protocol.value_or(api::Protocol::kTCP)));
    taken.insert(*p.name);
  };
  for (const auto& p : preset.ports) {
    const auto over =
        std::find_if(spec_ports.begin(), spec_ports.end(), [&](const auto& s) { return s.name == p.name; });
    add(over != spec_ports.end() ? *over : p);
  }
  for (const auto& p : spec_ports)
    if (p.name && p.container_port && !taken.contains(*p.name)) add(p);
  return out;
}

std::optional<api::Quantity> SharedMemory(const api::ModelServiceSpec& d) {
  return d.shared_memory_size ? d.shared_memory_size : api::PresetOf(d).shared_memory;
}

// readOnly of a mount: as asked, else true but for an emptyDir.
bool ReadOnly(const api::ModelVolume& v) { return v.read_only.value_or(!v.empty_dir.has_value()); }

json WantVolumeMounts(const api::ModelServiceSpec& d) {
  json out = json::array();
  for (const auto& v : d.volumes.value_or(std::vector<api::ModelVolume>{})) {
    json m = {{"name", v.name.value_or("")}, {"mountPath", v.mount_path.value_or("")}};
    if (ReadOnly(v)) m["readOnly"] = true;
    if (!v.sub_path.value_or("").empty()) m["subPath"] = *v.sub_path;
    out.push_back(std::move(m));
  }
  if (SharedMemory(d)) out.push_back({{"name", kShmVolume}, {"mountPath", kShmPath}});
  return out;
}

json VolumeSource(const api::ModelVolume& v) {
  if (v.persistent_volume_claim)
    return {{"persistentVolumeClaim", {{"claimName", v.persistent_volume_claim->claim_name.value_or("")}}}};
  if (v.config_map) {
    json s = {{"name", v.config_map->name.value_or("")}, {"defaultMode", kSecretDefaultMode}};
    if (v.config_map->optional) s["optional"] = *v.config_map->optional;
    return {{"configMap", s}};
  }
  if (v.secret) {
    json s = {{"secretName", v.secret->secret_name.value_or("")}, {"defaultMode", kSecretDefaultMode}};
    if (v.secret->optional) s["optional"] = *v.secret->optional;
    return {{"secret", s}};
  }
  json dir = json::object();
  if (v.empty_dir && v.empty_dir->size_limit) dir["sizeLimit"] = CanonicalQuantity(*v.empty_dir->size_limit);
  return {{"emptyDir", dir}};
}

// A volume list as the API server returns it, its sizes canonical.
json CanonicalVolumes(json volumes) {
  if (!volumes.is_array()) return volumes;
  for (auto& v : volumes) {
    if (!v.is_object() || !v.contains("emptyDir") || !v["emptyDir"].is_object()) continue;
    json& dir = v["emptyDir"];
    if (dir.contains("sizeLimit") && (dir["sizeLimit"].is_string() || dir["sizeLimit"].is_number_integer()))
      dir["sizeLimit"] = CanonicalQuantity(
          api::Quantity{dir["sizeLimit"].is_string() ? dir["sizeLimit"].get<std::string>() : dir["sizeLimit"].dump()});
  }
  return volumes;
}

}  // namespace

std::vector<std::string> OwnedContainerMembers() {
  return {"command", "ports", "readinessProbe", "livenessProbe", "startupProbe", "volumeMounts"};
}

json RuntimeEnv(const api::ModelServiceSpec& d) {
  const auto& preset = api::PresetOf(d);
  std::set<std::string> spec_names;
  for (const auto& e : d.env.value_or(std::vector<api::EnvVar>{})) spec_names.insert(e.name.value_or(""));
  json out = json::array();
  for (const auto& e : preset.env)
    if (!spec_names.contains(*e.name)) out.push_back(Served(api::ToJsonValue(e)));
  if (!preset.port_env.empty() && !spec_names.contains(std::string(preset.port_env)))
    out.push_back({{"name", preset.port_env}, {"value", std::to_string(*d.port)}});
  return out;
}

std::map<std::string, std::string> MetricsAnnotations(const api::ModelServiceSpec& d) {
  if (d.runtime.value_or(api::Runtime::kCustom) == api::Runtime::kCustom) return {};
  const auto& preset = api::PresetOf(d);
  for (const auto& p : WantPorts(d)) {
    if (p.value("name", "") == preset.metrics_port && p.contains("containerPort"))
      return {{kMetricsPortAnnotation, p["containerPort"].dump()},
              {kMetricsPathAnnotation, std::string(preset.metrics_path)}};
  }
  return {};
}

json WantArgs(const api::ModelServiceSpec& d) {
  json args = json::array();
  if (!d.command) {
    const auto& preset = api::PresetOf(d);
    for (const auto& a : preset.args) args.push_back(a);
    if (!preset.port_flag.empty()) args.push_back(std::string(preset.port_flag) + "=" + std::to_string(*d.port));
  }
  for (const auto& a : d.args.value_or(std::vector<std::string>{})) args.push_back(a);
  return OrNull(std::move(args));
}

json WantVolumes(const api::ModelServiceSpec& d) {
  json out = json::array();
  for (const auto& v : d.volumes.value_or(std::vector<api::ModelVolume>{})) {
    json volume = VolumeSource(v);
    volume["name"] = v.name.value_or("");
    out.push_back(std::move(volume));
  }
  if (const auto shm = SharedMemory(d))
    out.push_back({{"name", kShmVolume}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", CanonicalQuantity(*shm)}}}});
  return OrNull(std::move(out));
}

void OwnContainerFields(const api::ModelServiceSpec& d, json& c, Drift& drift) {
  const auto& preset = api::PresetOf(d);
  Own(c, "command", d.command ? OrNull(json(*d.command)) : json(), "command", drift);
  Own(c, "args", WantArgs(d), "args", drift);
  Own(c, "ports", WantPorts(d), "ports", drift);
  Own(c, "readinessProbe", WantProbe(d.readiness_probe, preset.readiness), "readinessProbe", drift);
  Own(c, "livenessProbe", WantProbe(d.liveness_probe, preset.liveness), "livenessProbe", drift);
  Own(c, "startupProbe", WantProbe(d.startup_probe, preset.startup), "startupProbe", drift);
  Own(c, "volumeMounts", OrNull(WantVolumeMounts(d)), "volumeMounts", drift);
}

void OwnVolumes(const api::ModelServiceSpec& d, json& pod, Drift& drift) {
  const json want = WantVolumes(d);
  // Sizes compared by value: the served ones are made canonical the same way.
  if (const auto it = pod.find("volumes"); it != pod.end() && !want.is_null() && CanonicalVolumes(*it) == want) return;
  Own(pod, "volumes", want, "spec.template.spec.volumes", drift);
}

}  // namespace ms::modelservice
