#include "shared/api/container_validation.h"

#include <array>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "shared/api/k8s_names.h"
#include "shared/api/quantity.h"

namespace ms::api {

namespace {

using nlohmann::json;

constexpr std::string_view kHttpPortName = "http";
constexpr std::string_view kShmPath = "/dev/shm";
constexpr std::string_view kShmVolume = "dshm";

std::string Index(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

void Invalid(const std::string& path, const std::string& value, const Problems& problems,
             std::vector<FieldError>& errors) {
  for (const auto& p : problems) errors.push_back(FieldError::Invalid(path, value, p));
}

// ---- ports ----

constexpr std::array<std::string_view, 2> kPortReads = {"spec.ports", "spec.port"};

void CheckPorts(const ModelServiceSpec& spec, std::vector<FieldError>& errors) {
  std::set<std::string> names;
  std::set<std::pair<int64_t, Protocol>> numbers;
  const auto& ports = *spec.ports;
  for (size_t i = 0; i < ports.size(); ++i) {
    const ContainerPort& p = ports[i];
    const std::string path = Index("spec.ports", i);
    if (const auto& name = p.name; name && name->size() <= ContainerPort::kName.max_length) {
      const Problems problems = PortNameProblems(*name);
      Invalid(path + ".name", *name, problems, errors);
      if (!problems.empty()) {
      } else if (*name == kHttpPortName) {
        errors.push_back(FieldError::Invalid(path + ".name", *name, "must not be http, the name of spec.port"));
      } else if (!names.insert(*name).second) {
        errors.push_back(FieldError::Duplicate(path + ".name", json(*name)));
      }
    }
    if (!p.container_port || !ContainerPort::kContainerPort.Contains(*p.container_port)) continue;
    const Protocol protocol = p.protocol.value_or(Protocol::kTCP);
    if (protocol == Protocol::kTCP && *p.container_port == spec.port.value_or(*ModelServiceSpec::kPort.default_value))
      errors.push_back(FieldError::Invalid(path + ".containerPort", json(*p.container_port),
                                           "must differ from spec.port, the port named http")
                           .Reading(kPortReads));
    else if (!numbers.emplace(*p.container_port, protocol).second)
      errors.push_back(FieldError::Duplicate(path + ".containerPort", json(*p.container_port)));
  }
}

// ---- probes ----

struct ProbeKind {
  const char* field;                      // readinessProbe
  std::array<std::string_view, 2> reads;  // the probe and the ports its port name may name
  bool success_threshold_one;             // liveness and startup probes
};
constexpr ProbeKind kReadiness{"readinessProbe", {"spec.readinessProbe", "spec.ports"}, false};
constexpr ProbeKind kLiveness{"livenessProbe", {"spec.livenessProbe", "spec.ports"}, true};
constexpr ProbeKind kStartup{"startupProbe", {"spec.startupProbe", "spec.ports"}, true};

// A port by name must be a port of the model container: http or one of spec.ports.
void CheckPortName(const ModelServiceSpec& spec, const std::optional<PortNumberOrName>& port, const std::string& path,
                   const ProbeKind& kind, std::vector<FieldError>& errors) {
  if (!port || !port->is_name || !PortNameProblems(port->name).empty() || port->name == kHttpPortName) return;
  for (const auto& p : spec.ports.value_or(std::vector<ContainerPort>{}))
    if (p.name == port->name) return;
  errors.push_back(
      FieldError::Invalid(path, json(port->name), "must be a port of the model container: http or a name of spec.ports")
          .Reading(kind.reads));
}

void CheckProbe(const ModelServiceSpec& spec, const Probe& probe, const ProbeKind& kind,
                std::vector<FieldError>& errors) {
  const std::string path = std::string("spec.") + kind.field;
  int handlers = 0;
  // In the API server's order (validateHandler): exec, httpGet, tcpSocket.
  const auto handler = [&](bool set, const char* name) {
    if (!set) return false;
    if (handlers++ == 0) return true;
    errors.push_back(FieldError::Forbidden(path + "." + name, "may not specify more than 1 handler type"));
    return false;
  };
  if (handler(probe.exec.has_value(), "exec") && probe.exec->command.value_or(std::vector<std::string>{}).empty())
    errors.push_back(FieldError::Required(path + ".exec.command"));
  // An empty httpGet.path is "/" (the API server defaults it before it validates).
  if (handler(probe.http_get.has_value(), "httpGet"))
    CheckPortName(spec, probe.http_get->port, path + ".httpGet.port", kind, errors);
  if (handler(probe.tcp_socket.has_value(), "tcpSocket"))
    CheckPortName(spec, probe.tcp_socket->port, path + ".tcpSocket.port", kind, errors);
  if (handlers == 0) errors.push_back(FieldError::Required(path, "must specify a handler type"));
  if (kind.success_threshold_one && probe.success_threshold && *probe.success_threshold != 1)
    errors.push_back(FieldError::Invalid(path + ".successThreshold", json(*probe.success_threshold), "must be 1"));
}

// ---- volumes ----

// A sub-path (validateLocalDescendingPath): relative, no ".." element.
void CheckSubPath(const std::string& sub, const std::string& path, std::vector<FieldError>& errors) {
  if (sub.starts_with('/')) errors.push_back(FieldError::Invalid(path, json(sub), "must be a relative path"));
  for (size_t start = 0; start <= sub.size();) {
    const size_t slash = std::min(sub.find('/', start), sub.size());
    if (std::string_view(sub).substr(start, slash - start) == "..") {
      errors.push_back(FieldError::Invalid(path, json(sub), "must not contain '..'"));
      return;
    }
    start = slash + 1;
  }
}

// Exactly one source (validateVolumeSource, in its order), and what each requires.
void CheckVolumeSource(const ModelVolume& v, const std::string& path, std::vector<FieldError>& errors) {
  int sources = 0;
  const auto source = [&](bool set, const char* name) {
    if (!set) return false;
    if (sources++ == 0) return true;
    errors.push_back(FieldError::Forbidden(path + "." + name, "may not specify more than 1 volume type"));
    return false;
  };
  if (source(v.empty_dir.has_value(), "emptyDir") && v.empty_dir->size_limit) {
    const auto limit = QuantityValue::Parse(*v.empty_dir->size_limit);
    if (limit && limit->negative())
      errors.push_back(
          FieldError::Forbidden(path + ".emptyDir.sizeLimit", "SizeLimit field must be a valid resource quantity"));
  }
  if (source(v.secret.has_value(), "secret") && v.secret->secret_name.value_or("").empty())
    errors.push_back(FieldError::Required(path + ".secret.secretName"));
  if (source(v.persistent_volume_claim.has_value(), "persistentVolumeClaim") &&
      v.persistent_volume_claim->claim_name.value_or("").empty())
    errors.push_back(FieldError::Required(path + ".persistentVolumeClaim.claimName"));
  if (source(v.config_map.has_value(), "configMap") && v.config_map->name.value_or("").empty())
    errors.push_back(FieldError::Required(path + ".configMap.name"));
  if (sources == 0) errors.push_back(FieldError::Required(path, "must specify a volume type"));
}

void CheckVolumes(const std::vector<ModelVolume>& volumes, std::vector<FieldError>& errors) {
  std::set<std::string> names, mounts;
  for (size_t i = 0; i < volumes.size(); ++i) {
    const ModelVolume& v = volumes[i];
    const std::string path = Index("spec.volumes", i);
    CheckVolumeSource(v, path, errors);
    if (const auto& name = v.name; name && name->empty()) {
      errors.push_back(FieldError::Required(path + ".name"));
    } else if (name && name->size() <= ModelVolume::kName.max_length) {
      const Problems problems = Dns1123LabelProblems(*name);
      Invalid(path + ".name", *name, problems, errors);
      if (problems.empty() && *name == kShmVolume)
        errors.push_back(FieldError::Invalid(path + ".name", *name,
                                             "must not be dshm, the name of the shared memory volume "
                                             "(spec.sharedMemorySize)"));
      else if (problems.empty() && !names.insert(*name).second)
        errors.push_back(FieldError::Duplicate(path + ".name", json(*name)));
    }
    if (const auto& mount = v.mount_path; mount && mount->empty()) {
      errors.push_back(FieldError::Required(path + ".mountPath"));
    } else if (mount) {
      if (!mount->starts_with('/'))
        errors.push_back(FieldError::Invalid(path + ".mountPath", *mount, "must be an absolute path"));
      else if (*mount == kShmPath || mount->starts_with(std::string(kShmPath) + "/"))
        errors.push_back(FieldError::Invalid(path + ".mountPath", *mount,
                                             "must not be /dev/shm: set its size with spec.sharedMemorySize"));
      if (!mounts.insert(*mount).second)
        errors.push_back(FieldError::Invalid(path + ".mountPath", *mount, "must be unique"));
    }
    if (v.sub_path && !v.sub_path->empty()) CheckSubPath(*v.sub_path, path + ".subPath", errors);
  }
}

}  // namespace

void CheckContainerFields(const ModelServiceSpec& spec, std::vector<FieldError>& errors) {
  if (spec.ports) CheckPorts(spec, errors);
  if (spec.readiness_probe) CheckProbe(spec, *spec.readiness_probe, kReadiness, errors);
  if (spec.liveness_probe) CheckProbe(spec, *spec.liveness_probe, kLiveness, errors);
  if (spec.startup_probe) CheckProbe(spec, *spec.startup_probe, kStartup, errors);
  if (spec.volumes) CheckVolumes(*spec.volumes, errors);
  if (spec.shared_memory_size) {
    const auto size = QuantityValue::Parse(*spec.shared_memory_size);
    static const QuantityValue kZero = *QuantityValue::Parse(Quantity{"0"});
    if (size && size->Compare(kZero) <= 0)
      errors.push_back(FieldError::Invalid("spec.sharedMemorySize", size->Canonical(), "must be greater than 0"));
  }
  // A RuntimeClass name (ValidateRuntimeClassName); a longer one is Too long already.
  if (const auto& rc = spec.runtime_class_name;
      rc && !rc->empty() && rc->size() <= ModelServiceSpec::kRuntimeClassName.max_length)
    Invalid("spec.runtimeClassName", *rc, Dns1123SubdomainProblems(*rc), errors);
}

}  // namespace ms::api
