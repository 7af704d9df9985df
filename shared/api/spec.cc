#include "shared/api/spec.h"

#include "shared/api/field_reader.h"
#include "shared/api/runtimes.h"

namespace ms::api {

using nlohmann::json;

namespace {

void ReadSpec(text::JsonRef spec, ParsedModelService& out) {
  FieldReader r(spec, "spec", {out.errors, out.warnings});
  ReadFields(r, out.spec);
}

}  // namespace

ParsedModelService ParseModelService(text::JsonRef object) {
  ParsedModelService out;
  // A denial has a few errors: one allocation for them rather than one
  // per doubling, each moving the errors before it (measured: about 1,000
  // instructions of a review denied with four errors). Six of 160 bytes
  // stay within the sizes glibc's malloc serves from its per-thread cache
  // (up to 1,032 bytes; eight took 400 instructions more of every review).
  out.errors.reserve(6);
  if (!object.is_object()) {
    out.errors.push_back(TypeError("<root>", object, "object"));
    return out;
  }
  for (const char* k : {"apiVersion", "kind"}) {
    auto it = object.find(k);
    if (it && !it->is_string()) out.errors.push_back(TypeError(k, *it, "string"));
  }
  if (auto it = object.find("metadata"); it && !it->is_object())
    out.errors.push_back(TypeError("metadata", *it, "object"));

  auto spec_it = object.find("spec");
  if (!spec_it) {
    out.errors.push_back(FieldError::Required("spec"));
    return out;
  }
  if (!spec_it->is_object()) {
    out.errors.push_back(TypeError("spec", *spec_it, "object"));
    return out;
  }
  ReadSpec(*spec_it, out);
  return out;
}

ParsedModelService ParseSpec(text::JsonRef spec) {
  ParsedModelService out;
  ReadSpec(spec, out);
  return out;
}

// The defaults that depend on other fields come first; ApplyDefaults
// (generated) then fills in every x-ms-default of the definition:
//   replicas        autoscaling.minReplicas (its default when unset) when
//                   that is a valid replica count
//   maxUnavailable  1 when the user set maxSurge to 0 (0/0 is invalid), with
//                   strategy type RollingUpdate (its default when unset)
//   port            the runtime's (runtimes.h): 8080 for Custom and
//                   MLServer and TGI, 8000 for vLLM and Triton
// Otherwise (generated): replicas 1, gpus 0, strategy.type
// RollingUpdate, and with RollingUpdate rollingUpdate.maxSurge "25%" and
// maxUnavailable 0; autoscaling.mode Controller and minReplicas 1 (autoscaling
// itself is never added); rollout.timeoutSeconds 600 and rollback Manual.
ModelServiceSpec ModelServiceSpec::Defaulted() const {
  ModelServiceSpec d = *this;
  if (!d.replicas && d.autoscaling) {
    const int64_t min = d.autoscaling->min_replicas.value_or(*Autoscaling::kMinReplicas.default_value);
    if (kReplicas.Contains(min)) d.replicas = min;
  }
  const StrategyType type = d.strategy && d.strategy->type ? *d.strategy->type : *Strategy::kType.default_value;
  if (type == StrategyType::kRollingUpdate && d.strategy && d.strategy->rolling_update) {
    RollingUpdate& ru = *d.strategy->rolling_update;
    if (ru.max_surge && ru.max_surge->IsZero() && !ru.max_unavailable) ru.max_unavailable = IntOrPercent{1, false};
  }
  if (!d.port) d.port = PresetOf(d).port;
  ApplyDefaults(d);
  return d;
}

std::optional<int64_t> ParseReplicas(text::JsonRef value, std::vector<FieldError>& errors) {
  static const std::string kPath = "spec.replicas";
  return ReadValue(value, kPath, ModelServiceSpec::kReplicas, errors);
}

}  // namespace ms::api
