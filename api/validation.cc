#include "api/validation.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

#include "api/types.h"

namespace ms {

namespace {

using nlohmann::json;

const char* TypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::null:
      return "null";
    case json::value_t::number_float:
      return "number";
    default:
      return "integer";
  }
}

FieldError TypeError(const std::string& path, const json& v, const char* want) {
  return FieldError::Invalid(path, v, std::string("must be of type ") + want + ", not " + TypeName(v));
}

// Integers only: JSON numbers written with a fraction or exponent (2.5, 1e2)
// and integers beyond 64 bits (parsed as floats) are not integers here.
bool IsInteger(const json& v) { return v.is_number_integer(); }

// The value clamped into int64 (uint64 beyond INT64_MAX saturates).
int64_t AsInt64(const json& v) {
  if (v.is_number_unsigned()) {
    auto u = v.get<uint64_t>();
    return u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                          : static_cast<int64_t>(u);
  }
  return v.get<int64_t>();
}

void CheckIntRange(const json& obj, const char* key, const std::string& path, int64_t lo, std::optional<int64_t> hi,
                   std::vector<FieldError>& errors) {
  auto it = obj.find(key);
  if (it == obj.end()) return;
  if (!IsInteger(*it)) {
    errors.push_back(TypeError(path, *it, "integer"));
    return;
  }
  int64_t n = AsInt64(*it);
  if (hi) {
    if (n < lo || n > *hi)
      errors.push_back(
          FieldError::Invalid(path, *it, "must be between " + std::to_string(lo) + " and " + std::to_string(*hi)));
  } else if (n < lo) {
    errors.push_back(FieldError::Invalid(path, *it, "must be greater than or equal to " + std::to_string(lo)));
  }
}

bool HasWhitespaceOrControl(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char ch) {
    auto c = static_cast<unsigned char>(ch);
    return c <= 0x20 || c == 0x7F;  // control characters and space (\t\n\v\f\r are controls)
  });
}

// "N%" with N in 0..100, no sign, no leading zeros except "0%".
bool IsPercent(const std::string& s) {
  if (s.size() < 2 || s.size() > 4 || s.back() != '%') return false;
  std::string digits = s.substr(0, s.size() - 1);
  if (digits.find_first_not_of("0123456789") != std::string::npos) return false;
  if (digits.size() > 1 && digits[0] == '0') return false;
  return std::stoi(digits) <= 100;
}

void CheckIntOrPercent(const json& obj, const char* key, const std::string& path, std::vector<FieldError>& errors) {
  auto it = obj.find(key);
  if (it == obj.end()) return;
  const char* detail = "must be an integer >= 0 or a percentage between 0% and 100%";
  if (it->is_string()) {
    if (!IsPercent(it->get<std::string>())) errors.push_back(FieldError::Invalid(path, *it, detail));
  } else if (IsInteger(*it)) {
    if (it->is_number_integer() && !it->is_number_unsigned() && it->get<int64_t>() < 0)
      errors.push_back(FieldError::Invalid(path, *it, detail));
  } else {
    errors.push_back(FieldError::Invalid(path, *it, detail));
  }
}

void CheckString(const json& obj, const char* key, const std::string& path, size_t min_len, size_t max_len,
                 std::vector<FieldError>& errors, bool* present_and_string = nullptr) {
  auto it = obj.find(key);
  if (it == obj.end()) return;
  if (!it->is_string()) {
    errors.push_back(TypeError(path, *it, "string"));
    return;
  }
  const auto& s = it->get_ref<const std::string&>();
  if (s.size() > max_len) {
    errors.push_back(FieldError::TooLong(path, max_len));
    return;
  }
  if (s.size() < min_len) {
    errors.push_back(FieldError::Invalid(path, *it, "must not be empty"));
    return;
  }
  if (present_and_string) *present_and_string = true;
}

void WarnUnknown(const json& obj, const std::string& path, const std::set<std::string>& known,
                 std::vector<std::string>& warnings) {
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (!known.count(it.key())) warnings.push_back("unknown field \"" + path + "." + it.key() + "\"");
}

const json* ObjectField(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? &*it : nullptr;
}

}  // namespace

bool IsZeroIntOrPercent(const json& v) {
  if (v.is_number_integer()) return AsInt64(v) == 0;
  if (v.is_string()) return v.get<std::string>() == "0%";
  return false;
}

void CheckFields(const json& object, std::vector<FieldError>& errors) {
  if (!object.is_object()) {
    errors.push_back(TypeError("<root>", object, "object"));
    return;
  }
  for (const char* k : {"apiVersion", "kind"}) {
    auto it = object.find(k);
    if (it != object.end() && !it->is_string()) errors.push_back(TypeError(k, *it, "string"));
  }
  if (auto it = object.find("metadata"); it != object.end() && !it->is_object())
    errors.push_back(TypeError("metadata", *it, "object"));

  auto spec_it = object.find("spec");
  if (spec_it == object.end()) {
    errors.push_back(FieldError::Required("spec"));
    return;
  }
  if (!spec_it->is_object()) {
    errors.push_back(TypeError("spec", *spec_it, "object"));
    return;
  }
  const json& spec = *spec_it;

  // model: required, 1..253 bytes, no whitespace or control characters.
  auto model = spec.find("model");
  if (model == spec.end()) {
    errors.push_back(FieldError::Required("spec.model"));
  } else if (!model->is_string()) {
    errors.push_back(TypeError("spec.model", *model, "string"));
  } else {
    const auto& m = model->get_ref<const std::string&>();
    if (m.size() > api::kMaxModelLength)
      errors.push_back(FieldError::TooLong("spec.model", api::kMaxModelLength));
    else if (m.empty() || HasWhitespaceOrControl(m))
      errors.push_back(FieldError::Invalid("spec.model", *model,
                                           "must be a non-empty string with no whitespace or control characters"));
  }
  CheckString(spec, "version", "spec.version", 0, api::kMaxVersionLength, errors);
  CheckString(spec, "image", "spec.image", 1, api::kMaxImageLength, errors);
  CheckIntRange(spec, "replicas", "spec.replicas", api::kMinReplicas, api::kMaxReplicas, errors);
  CheckIntRange(spec, "port", "spec.port", api::kMinPort, api::kMaxPort, errors);
  CheckIntRange(spec, "gpus", "spec.gpus", api::kMinGpus, api::kMaxGpus, errors);

  if (auto it = spec.find("strategy"); it != spec.end()) {
    if (!it->is_object()) {
      errors.push_back(TypeError("spec.strategy", *it, "object"));
    } else {
      const json& strategy = *it;
      if (auto t = strategy.find("type"); t != strategy.end()) {
        if (!t->is_string())
          errors.push_back(TypeError("spec.strategy.type", *t, "string"));
        else if (*t != api::kStrategyRollingUpdate && *t != api::kStrategyRecreate)
          errors.push_back(
              FieldError::Unsupported("spec.strategy.type", *t, {api::kStrategyRollingUpdate, api::kStrategyRecreate}));
      }
      if (auto ru = strategy.find("rollingUpdate"); ru != strategy.end()) {
        if (!ru->is_object()) {
          errors.push_back(TypeError("spec.strategy.rollingUpdate", *ru, "object"));
        } else {
          CheckIntOrPercent(*ru, "maxSurge", "spec.strategy.rollingUpdate.maxSurge", errors);
          CheckIntOrPercent(*ru, "maxUnavailable", "spec.strategy.rollingUpdate.maxUnavailable", errors);
        }
      }
    }
  }

  if (auto it = spec.find("autoscaling"); it != spec.end()) {
    if (!it->is_object()) {
      errors.push_back(TypeError("spec.autoscaling", *it, "object"));
    } else {
      const json& as = *it;
      CheckIntRange(as, "minReplicas", "spec.autoscaling.minReplicas", api::kMinReplicas, api::kMaxReplicas, errors);
      if (!as.contains("maxReplicas")) errors.push_back(FieldError::Required("spec.autoscaling.maxReplicas"));
      CheckIntRange(as, "maxReplicas", "spec.autoscaling.maxReplicas", api::kMinReplicas, api::kMaxReplicas, errors);
      if (!as.contains("targetQueueLength"))
        errors.push_back(FieldError::Required("spec.autoscaling.targetQueueLength"));
      CheckIntRange(as, "targetQueueLength", "spec.autoscaling.targetQueueLength", 1, std::nullopt, errors);
    }
  }
}

void CheckCrossFields(const json& object, std::vector<FieldError>& errors) {
  const json* spec = object.is_object() ? ObjectField(object, "spec") : nullptr;
  if (!spec) return;
  if (const json* strategy = ObjectField(*spec, "strategy")) {
    auto type = strategy->find("type");
    bool recreate = type != strategy->end() && *type == api::kStrategyRecreate;
    if (recreate && strategy->contains("rollingUpdate")) {
      errors.push_back(FieldError::Forbidden("spec.strategy.rollingUpdate",
                                             "may not be specified when strategy type is 'Recreate'"));
    } else if (const json* ru = ObjectField(*strategy, "rollingUpdate")) {
      auto surge = ru->find("maxSurge");
      auto unavail = ru->find("maxUnavailable");
      if (surge != ru->end() && unavail != ru->end() && IsZeroIntOrPercent(*surge) && IsZeroIntOrPercent(*unavail))
        errors.push_back(FieldError::Invalid("spec.strategy.rollingUpdate.maxUnavailable", *unavail,
                                             "may not be 0 when maxSurge is 0"));
    }
  }
  if (const json* as = ObjectField(*spec, "autoscaling")) {
    auto mn = as->find("minReplicas");
    auto mx = as->find("maxReplicas");
    if (mn != as->end() && mx != as->end() && IsInteger(*mn) && IsInteger(*mx) && AsInt64(*mn) > AsInt64(*mx))
      errors.push_back(
          FieldError::Invalid("spec.autoscaling.minReplicas", *mn,
                              "must be less than or equal to maxReplicas (" + std::to_string(AsInt64(*mx)) + ")"));
  }
}

std::vector<std::string> Warnings(const json& object) {
  std::vector<std::string> warnings;
  const json* spec = object.is_object() ? ObjectField(object, "spec") : nullptr;
  if (!spec) return warnings;
  WarnUnknown(*spec, "spec", {"model", "version", "image", "replicas", "port", "gpus", "strategy", "autoscaling"},
              warnings);
  if (const json* strategy = ObjectField(*spec, "strategy")) {
    WarnUnknown(*strategy, "spec.strategy", {"type", "rollingUpdate"}, warnings);
    if (const json* ru = ObjectField(*strategy, "rollingUpdate"))
      WarnUnknown(*ru, "spec.strategy.rollingUpdate", {"maxSurge", "maxUnavailable"}, warnings);
  }
  if (const json* as = ObjectField(*spec, "autoscaling")) {
    WarnUnknown(*as, "spec.autoscaling", {"minReplicas", "maxReplicas", "targetQueueLength"}, warnings);
    auto r = spec->find("replicas");
    auto mx = as->find("maxReplicas");
    auto mn = as->find("minReplicas");
    int64_t lo = (mn != as->end() && IsInteger(*mn)) ? AsInt64(*mn) : api::kDefaultMinReplicas;
    if (r != spec->end() && IsInteger(*r) && mx != as->end() && IsInteger(*mx)) {
      int64_t n = AsInt64(*r), hi = AsInt64(*mx);
      if (lo <= hi && (n < lo || n > hi))
        warnings.push_back("spec.replicas (" + std::to_string(n) + ") is outside [minReplicas, maxReplicas] = [" +
                           std::to_string(lo) + ", " + std::to_string(hi) +
                           "]: with spec.autoscaling set, the autoscaler decides the replica count");
    }
  }
  auto gpus = spec->find("gpus");
  if (gpus != spec->end() && IsInteger(*gpus) && AsInt64(*gpus) > 0 && !spec->contains("image"))
    warnings.push_back("spec.gpus is " + std::to_string(AsInt64(*gpus)) +
                       " but spec.image is not set: the controller's --default-image will be used; make sure it "
                       "supports GPUs");
  return warnings;
}

namespace {

bool PathCovers(const std::string& a, const std::string& b) {
  // a covers b if one is a prefix of the other on a field boundary.
  const std::string& shorter = a.size() <= b.size() ? a : b;
  const std::string& longer = a.size() <= b.size() ? b : a;
  if (shorter.empty() || shorter == "<root>") return true;
  if (longer.compare(0, shorter.size(), shorter) != 0) return false;
  return longer.size() == shorter.size() || longer[shorter.size()] == '.' || longer[shorter.size()] == '[';
}

// Whether every string in the object is short enough for std::regex (which
// recurses per character). Longer strings are rejected by the hand-written
// checks (TooLong) before the schema runs.
bool StringsBounded(const json& v, size_t limit, int depth = 0) {
  if (depth > 64) return false;
  if (v.is_string()) return v.get_ref<const std::string&>().size() <= limit;
  if (v.is_structured())
    for (const auto& e : v)
      if (!StringsBounded(e, limit, depth + 1)) return false;
  return true;
}

}  // namespace

ValidationOutcome ValidateModelService(const json& object, const SchemaValidator& schema) {
  ValidationOutcome out;
  CheckFields(object, out.errors);
  CheckCrossFields(object, out.errors);
  out.warnings = Warnings(object);
  // The schema as a safety net, when the strings it matches patterns against
  // (all in spec) are bounded. The object is validated in place (no copy).
  const json* spec = object.is_object() ? ObjectField(object, "spec") : nullptr;
  if (spec && StringsBounded(*spec, api::kMaxImageLength)) {
    for (auto& e : schema.Validate(object)) {
      bool covered = std::any_of(out.errors.begin(), out.errors.end(),
                                 [&](const FieldError& f) { return PathCovers(f.path, e.path); });
      if (!covered) {
        std::string path = e.path.empty() ? "<root>" : e.path;
        out.errors.push_back(FieldError::Invalid(path, json(nullptr), e.description));
        out.errors.back().value = "(schema)";
      }
    }
  }
  return out;
}

}  // namespace ms
