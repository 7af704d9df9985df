#include "shared/api/validation.h"

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

ValidationOutcome Validated(const ParsedModelService& parsed) {
  ValidationOutcome out{parsed.errors, parsed.warnings};
  CheckCrossFields(parsed.spec, out.errors);
  AddWarnings(parsed.spec, out.warnings);
  return out;
}

// Reads the Scale's spec.replicas (the last of each repeated key; absent: 0).
bool ReadScale(text::JsonReader& in, std::vector<FieldError>& errors) {
  using Kind = text::JsonReader::Kind;
  std::string_view key;
  bool found = false;
  if (in.Peek() != Kind::kObject) return in.Skip() && found;
  in.BeginObject();
  while (in.NextKey(key)) {
    if (key != "spec") {
      if (!in.Skip()) return false;
      continue;
    }
    found = false;  // a spec: the last one's replicas only
    errors.clear();
    if (in.Peek() != Kind::kObject) {
      if (!in.Skip()) return false;
      continue;
    }
    in.BeginObject();
    while (in.NextKey(key)) {
      if (key != "replicas") {
        if (!in.Skip()) return false;
        continue;
      }
      errors.clear();
      ParseReplicas(in, errors);
      found = true;
    }
  }
  return found;
}

}  // namespace

ValidationOutcome ValidateModelService(text::JsonText json) { return Validated(ParseModelService(json)); }

ValidationOutcome ValidateModelService(const nlohmann::json& object) { return Validated(ParseModelService(object)); }

ValidationOutcome ValidateModelService(const ParsedModelService& parsed) { return Validated(parsed); }

ValidationOutcome ValidateScale(text::JsonText json) {
  const std::string_view json_text = json.bytes;
  ValidationOutcome out;
  std::vector<char> buf(json_text.size() + text::JsonReader::kPadding, '\0');
  std::copy(json_text.begin(), json_text.end(), buf.begin());
  text::JsonReader in(buf.data(), json_text.size(), kMaxObjectDepth);
  if (!ReadScale(in, out.errors)) {
    out.errors.clear();
    char zero[text::JsonReader::kPadding + 1] = "0";
    text::JsonReader absent(zero, 1, 1);
    ParseReplicas(absent, out.errors);
  }
  return out;
}

ValidationOutcome ValidateScale(const nlohmann::json& scale) {
  const std::string text = scale.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return ValidateScale(text::JsonText{text});
}

}  // namespace ms::api
