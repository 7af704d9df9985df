#include "shared/api/pod_validation.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <set>
#include <span>
#include <string_view>

#include "shared/api/container_validation.h"
#include "shared/api/k8s_names.h"
#include "shared/api/pod_template.h"
#include "shared/api/quantity.h"
#include "shared/api/scheduling_validation.h"

namespace ms::api {

namespace {

using nlohmann::json;

using ResourceList = std::map<std::string, Quantity>;

std::string Index(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

// One "Invalid value" per problem, as the API server reports each message.
void Invalid(const std::string& path, const std::string& value, const Problems& problems,
             std::vector<FieldError>& errors) {
  for (const auto& p : problems) errors.push_back(FieldError::Invalid(path, value, p));
}

bool IsResourceName(const std::string& name) {
  return std::any_of(kResourceNames.begin(), kResourceNames.end(), [&](const char* n) { return name == n; });
}

// The names and values of one list (requests or limits).
void CheckResourceList(const ResourceList& list, const std::string& path, std::vector<FieldError>& errors) {
  for (const auto& [name, quantity] : list) {
    const std::string p = path + "[" + name + "]";
    if (name == kGpuResource) {
      errors.push_back(FieldError::Forbidden(p, "the GPUs of each pod come from spec.gpus: set spec.gpus instead"));
    } else if (!IsResourceName(name)) {
      errors.push_back(FieldError::Unsupported(p, name, {kResourceNames.begin(), kResourceNames.end()}));
    } else if (auto v = QuantityValue::Parse(quantity); v && v->negative()) {
      errors.push_back(FieldError::Invalid(p, v->Canonical(), "must be greater than or equal to 0"));
    }
  }
}

// The request and the limit of a resource (kResourceNames), as a rule
// between them reads them (FieldError::reads).
std::span<const std::string_view> RequestAndLimit(const std::string& name) {
  static constexpr std::string_view kReads[][2] = {
      {"spec.resources.requests[cpu]", "spec.resources.limits[cpu]"},
      {"spec.resources.requests[memory]", "spec.resources.limits[memory]"},
      {"spec.resources.requests[ephemeral-storage]", "spec.resources.limits[ephemeral-storage]"}};
  static_assert(std::size(kReads) == kResourceNames.size());
  for (size_t i = 0; i < kResourceNames.size(); ++i)
    if (name == kResourceNames[i]) return kReads[i];
  return {};
}

void CheckResources(const Resources& r, std::vector<FieldError>& errors) {
  const ResourceList none;
  const ResourceList& requests = r.requests ? *r.requests : none;
  const ResourceList& limits = r.limits ? *r.limits : none;
  CheckResourceList(limits, "spec.resources.limits", errors);
  CheckResourceList(requests, "spec.resources.requests", errors);
  for (const auto& [name, quantity] : requests) {
    auto limit = limits.find(name);
    if (limit == limits.end() || !IsResourceName(name)) continue;
    const auto req = QuantityValue::Parse(quantity), lim = QuantityValue::Parse(limit->second);
    if (req && lim && req->Compare(*lim) > 0)
      errors.push_back(FieldError::Invalid("spec.resources.requests", req->Canonical(),
                                           "must be less than or equal to " + name + " limit of " + lim->Canonical())
                           .Reading(RequestAndLimit(name)));
  }
}

// secretKeyRef / configMapKeyRef: a valid object name and a key.
template <class Selector>
void CheckKeySelector(const Selector& s, const std::string& path, std::vector<FieldError>& errors) {
  if (s.name) Invalid(path + ".name", *s.name, Dns1123SubdomainProblems(*s.name), errors);
  if (!s.key) return;  // reported as required by the parser
  if (s.key->empty())
    errors.push_back(FieldError::Required(path + ".key"));
  else
    Invalid(path + ".key", *s.key, ConfigMapKeyProblems(*s.key), errors);
}

void CheckValueFrom(const EnvVar& e, const std::string& path, std::vector<FieldError>& errors) {
  const EnvVarSource& from = *e.value_from;
  int sources = 0;
  if (from.config_map_key_ref) {
    ++sources;
    CheckKeySelector(*from.config_map_key_ref, path + ".configMapKeyRef", errors);
  }
  if (from.secret_key_ref) {
    ++sources;
    CheckKeySelector(*from.secret_key_ref, path + ".secretKeyRef", errors);
  }
  if (sources == 0)
    errors.push_back(FieldError::Invalid(path, "", "must specify one of: `configMapKeyRef` or `secretKeyRef`"));
  else if (!e.value.value_or("").empty())
    errors.push_back(FieldError::Invalid(path, "", "may not be specified when `value` is not empty"));
  else if (sources > 1)
    errors.push_back(FieldError::Invalid(path, "", "may not have more than one field specified at a time"));
}

void CheckEnv(const std::vector<EnvVar>& env, std::vector<FieldError>& errors) {
  for (size_t i = 0; i < env.size(); ++i) {
    const EnvVar& e = env[i];
    const std::string path = Index("spec.env", i);
    if (e.name && e.name->empty()) {
      errors.push_back(FieldError::Required(path + ".name"));
    } else if (e.name) {
      Invalid(path + ".name", *e.name, EnvVarNameProblems(*e.name), errors);
      if (*e.name == kEnvModelName || *e.name == kEnvModelVersion)
        errors.push_back(FieldError::Forbidden(
            path + ".name", std::string(*e.name) + " is set by the controller from spec." +
                                (*e.name == kEnvModelName ? "model" : "version") + ": set that field instead"));
    }
    if (e.value_from) CheckValueFrom(e, path + ".valueFrom", errors);
  }
}

// One "Invalid value" per problem of an entry of a map, reported on the
// map's own path (as the API server does) and reading the entry (ratchet.h).
void InvalidEntry(const std::string& path, const std::string& key, const std::string& value, const Problems& problems,
                  std::vector<FieldError>& errors) {
  for (const auto& p : problems) errors.push_back(FieldError::Invalid(path, value, p).OfEntry(key));
}

// metav1 ValidateLabels: every message on the map's own path.
void CheckLabels(const std::map<std::string, std::string>& labels, const std::string& path,
                 std::vector<FieldError>& errors) {
  for (const auto& [k, v] : labels) {
    InvalidEntry(path, k, k, QualifiedNameProblems(k), errors);
    InvalidEntry(path, k, v, LabelValueProblems(v), errors);
  }
}

void CheckTolerations(const std::vector<Toleration>& tolerations, std::vector<FieldError>& errors) {
  for (size_t i = 0; i < tolerations.size(); ++i) {
    const Toleration& t = tolerations[i];
    const std::string path = Index("spec.tolerations", i);
    const std::string key = t.key.value_or(""), value = t.value.value_or("");
    const bool exists = t.operator_ == TolerationOperator::kExists;
    const std::string op = t.operator_ ? ToString(*t.operator_) : "";
    if (!key.empty()) Invalid(path + ".key", key, QualifiedNameProblems(key), errors);
    if (key.empty() && !exists)
      errors.push_back(FieldError::Invalid(
          path + ".operator", op,
          "operator must be Exists when `key` is empty, which means \"match all values and all keys\""));
    if (t.toleration_seconds && t.effect != TolerationEffect::kNoExecute)
      errors.push_back(FieldError::Invalid(path + ".effect", t.effect ? ToString(*t.effect) : "",
                                           "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    if (!exists) {
      const Problems problems = LabelValueProblems(value);
      std::string joined;
      for (const auto& p : problems) joined += (joined.empty() ? "" : ";") + p;
      if (!problems.empty()) errors.push_back(FieldError::Invalid(path + ".operator", value, joined));
    } else if (!value.empty()) {
      errors.push_back(
          FieldError::Invalid(path + ".operator", value, "value must be empty when `operator` is 'Exists'"));
    }
  }
}

// "-5", "0", "12" but not "+1", "007" or beyond int32 (GetDeletionCostFromPodAnnotations).
bool IsDeletionCost(const std::string& v) {
  if (v.empty() || !(v[0] == '-' || v == "0" || (v[0] >= '1' && v[0] <= '9'))) return false;
  int32_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  return ec == std::errc() && end == v.data() + v.size();
}

// The annotations that set an AppArmor or seccomp profile (the API server
// still reads them: it copies one into the pod's field, or refuses a pod
// whose annotation and field disagree) may not undo the restricted Pod
// Security Standard the controller's pods keep. As the Pod Security
// admission's checks (appArmorProfile; seccompProfile_baseline of policy
// versions before 1.19), on any container name: an AppArmor profile of
// "runtime/default", "localhost/*" or none; a seccomp profile of
// "runtime/default", its old name "docker/default", or "localhost/*".
void CheckProfileAnnotations(const std::map<std::string, std::string>& annotations, std::vector<FieldError>& errors) {
  static constexpr std::string_view kAppArmor = "container.apparmor.security.beta.kubernetes.io/";
  static constexpr std::string_view kSeccompPod = "seccomp.security.alpha.kubernetes.io/pod";
  static constexpr std::string_view kSeccomp = "container.seccomp.security.alpha.kubernetes.io/";
  static constexpr std::string_view kLocalhost = "localhost/";
  static constexpr std::string_view kAllows =
      ": the pods keep the restricted Pod Security Standard, which allows only ";
  for (const auto& [k, v] : annotations) {
    if (k.starts_with(kAppArmor) && !v.empty() && v != "runtime/default" && !v.starts_with(kLocalhost)) {
      errors.push_back(FieldError::Forbidden("spec.podAnnotations[" + k + "]",
                                             "forbidden AppArmor profile " + RenderValue(json(v)) +
                                                 std::string(kAllows) + "\"runtime/default\" and \"localhost/*\""));
    } else if ((k == kSeccompPod || k.starts_with(kSeccomp)) && v != "runtime/default" && v != "docker/default" &&
               !v.starts_with(kLocalhost)) {
      errors.push_back(FieldError::Forbidden(
          "spec.podAnnotations[" + k + "]", "forbidden seccomp profile " + RenderValue(json(v)) + std::string(kAllows) +
                                                "\"runtime/default\" (or \"docker/default\") and \"localhost/*\""));
    }
  }
}

void CheckAnnotations(const std::map<std::string, std::string>& annotations, std::vector<FieldError>& errors) {
  constexpr size_t kTotalLimit = 256 * 1024;
  size_t total = 0;
  for (const auto& [k, v] : annotations) {
    std::string lower = k;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    InvalidEntry("spec.podAnnotations", k, k, QualifiedNameProblems(lower), errors);
    total += k.size() + v.size();
  }
  if (total > kTotalLimit) errors.push_back(FieldError::TooLong("spec.podAnnotations", kTotalLimit));
  static constexpr const char* kDeletionCost = "controller.kubernetes.io/pod-deletion-cost";
  if (auto it = annotations.find(kDeletionCost); it != annotations.end() && !IsDeletionCost(it->second))
    errors.push_back(FieldError::Invalid(std::string("spec.podAnnotations[") + kDeletionCost + "]", it->second,
                                         "must be a 32bit integer"));
  CheckProfileAnnotations(annotations, errors);
}

void CheckPodLabels(const std::map<std::string, std::string>& labels, std::vector<FieldError>& errors) {
  CheckLabels(labels, "spec.podLabels", errors);
  for (const auto& [k, v] : labels) {
    if (IsControllerPodLabel(k))
      errors.push_back(FieldError::Forbidden(
          "spec.podLabels[" + k + "]",
          "the controller sets this label on every pod (the Deployment and the Service select the pods by "
          "app.kubernetes.io/name and app.kubernetes.io/instance)"));
  }
}

}  // namespace

void CheckPodFields(const ModelServiceSpec& spec, std::vector<FieldError>& errors) {
  if (spec.resources) CheckResources(*spec.resources, errors);
  if (spec.env) CheckEnv(*spec.env, errors);
  if (spec.node_selector) CheckLabels(*spec.node_selector, "spec.nodeSelector", errors);
  if (spec.tolerations) CheckTolerations(*spec.tolerations, errors);
  if (spec.affinity) CheckAffinity(*spec.affinity, errors);
  if (spec.topology_spread_constraints) CheckTopologySpreadConstraints(*spec.topology_spread_constraints, errors);
  if (const auto& sa = spec.service_account_name; sa && !sa->empty())
    Invalid("spec.serviceAccountName", *sa, Dns1123SubdomainProblems(*sa), errors);
  // A PriorityClass name (NameIsDNSSubdomain); a longer one is Too long already.
  if (const auto& pc = spec.priority_class_name;
      pc && !pc->empty() && pc->size() <= ModelServiceSpec::kPriorityClassName.max_length)
    Invalid("spec.priorityClassName", *pc, Dns1123SubdomainProblems(*pc), errors);
  if (spec.pod_annotations) CheckAnnotations(*spec.pod_annotations, errors);
  if (spec.pod_labels) CheckPodLabels(*spec.pod_labels, errors);
  CheckContainerFields(spec, errors);
}

namespace {

// pkg/api/pod/warnings.go: a later variable of the same name hides the
// earlier one unless it only extends it ("$(X)123").
void WarnEnv(const std::vector<EnvVar>& env, std::vector<std::string>& warnings) {
  std::set<std::string> seen;
  for (size_t i = 0; i < env.size(); ++i) {
    const std::string name = env[i].name.value_or(""), value = env[i].value.value_or("");
    if (seen.insert(name).second) continue;
    const std::string ref = "$(" + name + ")";
    if (env[i].value_from || value == ref || value.find(ref) == std::string::npos)
      warnings.push_back(Index("spec.env", i) + ": hides previous definition of \"" + name +
                         "\", which may be dropped when using apply");
  }
}

void WarnPullSecrets(const std::vector<LocalObjectReference>& secrets, std::vector<std::string>& warnings) {
  std::set<std::string> seen;
  for (size_t i = 0; i < secrets.size(); ++i) {
    const std::string name = secrets[i].name.value_or("");
    const std::string path = Index("spec.imagePullSecrets", i) + ".name";
    if (!seen.insert(name).second) warnings.push_back(path + ": duplicate name \"" + name + "\"");
  }
  for (size_t i = 0; i < secrets.size(); ++i) {
    if (secrets[i].name.value_or("").empty())
      warnings.push_back(Index("spec.imagePullSecrets", i) + ".name: invalid empty name \"\"");
  }
}

void WarnFractionalBytes(const Resources& r, std::vector<std::string>& warnings) {
  for (const char* name : {"memory", "ephemeral-storage"}) {
    for (const auto& [list, path] :
         {std::pair{&r.limits, "spec.resources.limits"}, {&r.requests, "spec.resources.requests"}}) {
      if (!*list) continue;
      auto it = (*list)->find(name);
      if (it == (*list)->end()) continue;
      const auto v = QuantityValue::Parse(it->second);
      if (v && !v->WholeMillis())
        warnings.push_back(std::string(path) + "[" + name + "]: fractional byte value \"" + v->Canonical() +
                           "\" is invalid, must be an integer");
    }
  }
}

}  // namespace

void AddPodWarnings(const ModelServiceSpec& spec, std::vector<std::string>& warnings) {
  if (spec.image_pull_secrets) WarnPullSecrets(*spec.image_pull_secrets, warnings);
  if (spec.resources) WarnFractionalBytes(*spec.resources, warnings);
  if (spec.env) WarnEnv(*spec.env, warnings);
}

}  // namespace ms::api
