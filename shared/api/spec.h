// The ModelService spec as a typed value (design.md §2), the one both
// programs use: the webhook validates and defaults it, the controller builds
// its desired state from it. ParseModelService reads it from JSON and reports
// every single-field error in the API server's wording; Defaulted() is the
// only place the defaults are written. Small (no JSON inside), so a cache can
// keep one per object.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/field_error.h"

namespace ms::api {

// An int-or-string field that takes an integer >= 0 or "N%" with N in 0..100.
struct IntOrPercent {
  int64_t value = 0;
  bool percent = false;

  bool IsZero() const { return value == 0; }
  nlohmann::json ToJson() const;  // 3 or "25%"
  bool operator==(const IntOrPercent&) const = default;
};

enum class StrategyType : uint8_t { kRollingUpdate, kRecreate };
const char* ToString(StrategyType type);

struct RollingUpdate {
  std::optional<IntOrPercent> max_surge;
  std::optional<IntOrPercent> max_unavailable;
  bool operator==(const RollingUpdate&) const = default;
};

struct Strategy {
  std::optional<StrategyType> type;
  std::optional<RollingUpdate> rolling_update;
  bool operator==(const Strategy&) const = default;
};

// spec.autoscaling.mode: Controller (the controller's autoscaler) or HPA (a
// HorizontalPodAutoscaler the controller owns).
enum class AutoscalingMode : uint8_t { kController, kHPA };
const char* ToString(AutoscalingMode mode);

struct Autoscaling {
  std::optional<AutoscalingMode> mode;
  std::optional<int64_t> min_replicas;
  std::optional<int64_t> max_replicas;
  std::optional<int64_t> target_queue_length;
  bool operator==(const Autoscaling&) const = default;
};

// spec.rollout: the Deployment's progress deadline, and whether the
// controller rolls a failed rollout back to the serving version.
enum class RollbackPolicy : uint8_t { kManual, kAutomatic };
const char* ToString(RollbackPolicy policy);

struct Rollout {
  std::optional<int64_t> timeout_seconds;
  std::optional<RollbackPolicy> rollback;
  bool operator==(const Rollout&) const = default;
};

// A field is set when the object has it in a form it can be read in: an
// integer field any JSON integer (out-of-range ones too, beyond int64
// saturated), a string field any string, an int-or-percent field an integer
// or a valid "N%", strategy.type, autoscaling.mode and rollout.rollback a supported value, an
// object field an
// object. Whatever cannot be read is left unset and reported by the parser.
struct ModelServiceSpec {
  std::optional<std::string> model;
  std::optional<std::string> version;
  std::optional<std::string> image;  // unset: the controller's --default-image
  std::optional<int64_t> replicas;
  std::optional<int64_t> port;
  std::optional<int64_t> gpus;
  std::optional<Strategy> strategy;
  std::optional<Autoscaling> autoscaling;
  std::optional<Rollout> rollout;

  // The spec with the defaults of design.md §2 where it has no value:
  //   replicas        autoscaling.minReplicas when that is in 1..100, else 1
  //   port 8080, gpus 0
  //   strategy.type   RollingUpdate
  //   strategy.rollingUpdate (RollingUpdate only): maxSurge "25%",
  //                   maxUnavailable 0, or 1 when maxSurge is 0 (0/0 is invalid)
  //   autoscaling.mode Controller, autoscaling.minReplicas 1 (autoscaling
  //                   itself is never added)
  //   rollout         timeoutSeconds 600, rollback Manual
  // model, version and image have no default.
  ModelServiceSpec Defaulted() const;

  // The set fields as the object's `spec` holds them.
  nlohmann::json ToJson() const;

  bool operator==(const ModelServiceSpec&) const = default;
};

struct ParsedModelService {
  ModelServiceSpec spec;
  // The single-field errors (type, range, length, format, required) in the
  // order of the fields in design.md §2, and the unknown fields of `spec`.
  std::vector<FieldError> errors;
  std::vector<std::string> warnings;
};

// Reads a ModelService object (apiVersion, kind, metadata are only type
// checked). Never throws.
ParsedModelService ParseModelService(const nlohmann::json& object);
// Reads the object's `spec` alone (which must be a JSON object).
ParsedModelService ParseSpec(const nlohmann::json& spec);

// The rule of spec.replicas (an integer in 1..100, errors worded as for the
// ModelService) applied to one value, e.g. the spec.replicas of a Scale.
std::optional<int64_t> ParseReplicas(const nlohmann::json& value, std::vector<FieldError>& errors);

// The rank of a field name in the order of design.md §2 (apiVersion, kind,
// metadata, spec, model, version, ..., targetQueueLength, rollout, ...); unknown names
// rank after all known ones.
size_t FieldRank(std::string_view name);

}  // namespace ms::api
