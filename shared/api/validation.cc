#include "shared/api/validation.h"

#include <algorithm>

#include "shared/api/pod_validation.h"
#include "shared/api/types.h"

namespace ms::api {

using nlohmann::json;

namespace {

// What each rule between fields reads (FieldError::reads).
constexpr std::string_view kRecreateReads[] = {"spec.strategy.type", "spec.strategy.rollingUpdate"};
constexpr std::string_view kBothZeroReads[] = {"spec.strategy.type", "spec.strategy.rollingUpdate.maxSurge",
                                               "spec.strategy.rollingUpdate.maxUnavailable"};
constexpr std::string_view kMinMaxReads[] = {"spec.autoscaling.minReplicas", "spec.autoscaling.maxReplicas"};
constexpr std::string_view kGpuTargetReads[] = {"spec.autoscaling.targetGPUUtilization", "spec.gpus"};

}  // namespace

void CheckCrossFields(const ModelServiceSpec& spec, std::vector<FieldError>& errors) {
  if (const auto& st = spec.strategy) {
    const auto& ru = st->rolling_update;
    // Each rule names the values it reads: an UPDATE reports it only when one changed (ratchet.h).
    if (st->type == StrategyType::kRecreate && ru) {
      errors.push_back(
          FieldError::Forbidden("spec.strategy.rollingUpdate", "may not be specified when strategy type is 'Recreate'")
              .Reading(kRecreateReads));
    } else if (ru && ru->max_surge && ru->max_unavailable && ru->max_surge->IsZero() && ru->max_unavailable->IsZero()) {
      errors.push_back(FieldError::Invalid("spec.strategy.rollingUpdate.maxUnavailable",
                                           ToJsonValue(*ru->max_unavailable), "may not be 0 when maxSurge is 0")
                           .Reading(kBothZeroReads));
    }
  }
  if (const auto& as = spec.autoscaling) {
    if (as->min_replicas && as->max_replicas && *as->min_replicas > *as->max_replicas)
      errors.push_back(
          FieldError::Invalid("spec.autoscaling.minReplicas", *as->min_replicas,
                              "must be less than or equal to maxReplicas (" + std::to_string(*as->max_replicas) + ")")
              .Reading(kMinMaxReads));
    if (as->target_gpu_utilization && spec.gpus.value_or(0) == 0)
      errors.push_back(FieldError::Invalid("spec.autoscaling.targetGPUUtilization", *as->target_gpu_utilization,
                                           "may only be set when spec.gpus is greater than 0")
                           .Reading(kGpuTargetReads));
  }
  CheckPodFields(spec, errors);
}

void AddWarnings(const ModelServiceSpec& spec, std::vector<std::string>& warnings) {
  if (const auto& as = spec.autoscaling; as && spec.replicas && as->max_replicas) {
    const int64_t n = *spec.replicas, hi = *as->max_replicas;
    const int64_t lo = as->min_replicas.value_or(*Autoscaling::kMinReplicas.default_value);
    if (lo <= hi && (n < lo || n > hi))
      warnings.push_back("spec.replicas (" + std::to_string(n) + ") is outside [minReplicas, maxReplicas] = [" +
                         std::to_string(lo) + ", " + std::to_string(hi) +
                         "]: with spec.autoscaling set, the autoscaler decides the replica count");
  }
  if (spec.gpus && *spec.gpus > 0 && !spec.image)
    warnings.push_back("spec.gpus is " + std::to_string(*spec.gpus) +
                       " but spec.image is not set: the controller's --default-image will be used; make sure it "
                       "supports GPUs");
  AddPodWarnings(spec, warnings);
}

namespace {

// A field path with map keys as the schema's paths name them:
// "spec.nodeSelector[pool]" -> "spec.nodeSelector.pool" (indices stay).
std::string SchemaPath(const std::string& path) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    const size_t close = path[i] == '[' ? path.find(']', i) : std::string::npos;
    if (close == std::string::npos) {
      out += path[i];
      continue;
    }
    const std::string inner = path.substr(i + 1, close - i - 1);
    const bool index = !inner.empty() && inner.find_first_not_of("0123456789") == std::string::npos;
    out += index ? "[" + inner + "]" : "." + inner;
    i = close;
  }
  return out;
}

// Whether every string in the object is short enough for std::regex (which
// recurses per character). Longer strings are rejected by the hand-written
// checks (TooLong) before the schema runs.
bool StringsBounded(JsonRef v, size_t limit, int depth = 0) {
  if (depth > 64) return false;
  if (v.is_string()) return v.str().size() <= limit;
  bool bounded = true;
  if (v.is_array()) {
    for (size_t i = 0, n = v.size(); i < n && bounded; ++i) bounded = StringsBounded(v.at(i), limit, depth + 1);
  } else if (v.is_object()) {
    v.for_each_member([&](std::string_view, JsonRef e) {
      if (bounded) bounded = StringsBounded(e, limit, depth + 1);
    });
  }
  return bounded;
}

}  // namespace

bool ErrorCovers(const FieldError& error, const std::string& schema_path) {
  // a covers b if one is a prefix of the other on a field boundary.
  const std::string a = SchemaPath(error.path);
  const std::string& b = schema_path;
  const std::string& shorter = a.size() <= b.size() ? a : b;
  const std::string& longer = a.size() <= b.size() ? b : a;
  if (shorter.empty() || shorter == "<root>") return true;
  if (longer.compare(0, shorter.size(), shorter) != 0) return false;
  return longer.size() == shorter.size() || longer[shorter.size()] == '.' || longer[shorter.size()] == '[';
}

ValidationOutcome ValidateModelService(JsonRef object, const SchemaValidator& schema) {
  ParsedModelService parsed = ParseModelService(object);
  ValidationOutcome out{std::move(parsed.errors), std::move(parsed.warnings)};
  CheckCrossFields(parsed.spec, out.errors);
  AddWarnings(parsed.spec, out.warnings);
  // The schema over status: the parser reads and checks all the rest (the
  // root's apiVersion, kind, metadata and spec), and explains every
  // violation of the schema there (validation.h). When the strings the
  // schema would match patterns against (all in spec) are bounded. The
  // object is validated in place (no copy).
  auto spec = object.find("spec");
  if (!spec || !spec->is_object() || !object.find("status")) return out;
  auto covered = [&](const std::string& path) {
    return std::any_of(out.errors.begin(), out.errors.end(), [&](const FieldError& f) { return ErrorCovers(f, path); });
  };
  // valijson only for the wording of a violation no error above explains:
  // where the violations are, the compiled schema says at a fraction of the
  // cost.
  if (auto paths = schema.ViolationPaths(object, "spec"); paths && std::all_of(paths->begin(), paths->end(), covered))
    return out;
  if (!StringsBounded(*spec, ModelServiceSpec::kImage.max_length)) return out;
  for (auto& e : schema.Validate(object)) {
    if (!covered(e.path)) {
      std::string path = e.path.empty() ? "<root>" : e.path;
      out.errors.push_back(FieldError::Invalid(path, json(nullptr), e.description));
      out.errors.back().value = "(schema)";
    }
  }
  return out;
}

ValidationOutcome ValidateScale(JsonRef scale) {
  ValidationOutcome out;
  static const json kZero = 0;
  JsonRef replicas = kZero;
  if (auto spec = scale.find("spec"); spec && spec->is_object()) {
    if (auto r = spec->find("replicas")) replicas = *r;
  }
  ParseReplicas(replicas, out.errors);
  return out;
}

}  // namespace ms::api
