#include "api/spec.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string_view>

#include "api/types.h"

namespace ms::api {

using nlohmann::json;

namespace {

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

// The value clamped into int64 (uint64 beyond INT64_MAX saturates). Integers
// only: JSON numbers written with a fraction or exponent (2.5, 1e2) and
// integers beyond 64 bits (parsed as floats) are not integers here.
int64_t AsInt64(const json& v) {
  if (v.is_number_unsigned()) {
    auto u = v.get<uint64_t>();
    return u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                          : static_cast<int64_t>(u);
  }
  return v.get<int64_t>();
}

bool HasWhitespaceOrControl(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char ch) {
    auto c = static_cast<unsigned char>(ch);
    return c <= 0x20 || c == 0x7F;  // control characters and space (\t\n\v\f\r are controls)
  });
}

// "N%" with N in 0..100, no sign, no leading zeros except "0%".
std::optional<IntOrPercent> ParsePercent(const std::string& s) {
  if (s.size() < 2 || s.size() > 4 || s.back() != '%') return std::nullopt;
  const std::string_view digits(s.data(), s.size() - 1);
  if (digits.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;
  int64_t n = 0;
  for (char c : digits) n = n * 10 + (c - '0');
  if (n > 100) return std::nullopt;
  return IntOrPercent{n, true};
}

// Reads one object of the spec: each Read* looks a key up, records what it
// could read and reports what it could not.
class Reader {
 public:
  Reader(const json& obj, std::string path, std::vector<FieldError>& errors)
      : obj_(obj), path_(std::move(path)), errors_(errors) {}

  std::string Path(const char* key) const { return path_ + "." + key; }
  const json* Find(const char* key) const {
    auto it = obj_.find(key);
    return it == obj_.end() ? nullptr : &*it;
  }
  void Require(const char* key) {
    if (!Find(key)) errors_.push_back(FieldError::Required(Path(key)));
  }

  // An integer in [lo, hi] (no upper bound without `hi`).
  std::optional<int64_t> Int(const char* key, int64_t lo, std::optional<int64_t> hi) {
    const json* v = Find(key);
    if (!v) return std::nullopt;
    if (!v->is_number_integer()) {
      errors_.push_back(TypeError(Path(key), *v, "integer"));
      return std::nullopt;
    }
    const int64_t n = AsInt64(*v);
    if (hi && (n < lo || n > *hi)) {
      errors_.push_back(
          FieldError::Invalid(Path(key), *v, "must be between " + std::to_string(lo) + " and " + std::to_string(*hi)));
    } else if (!hi && n < lo) {
      errors_.push_back(FieldError::Invalid(Path(key), *v, "must be greater than or equal to " + std::to_string(lo)));
    }
    return n;
  }

  // A string of min_len..max_len bytes.
  std::optional<std::string> String(const char* key, size_t min_len, size_t max_len) {
    const json* v = Find(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) {
      errors_.push_back(TypeError(Path(key), *v, "string"));
      return std::nullopt;
    }
    const auto& s = v->get_ref<const std::string&>();
    if (s.size() > max_len)
      errors_.push_back(FieldError::TooLong(Path(key), max_len));
    else if (s.size() < min_len)
      errors_.push_back(FieldError::Invalid(Path(key), *v, "must not be empty"));
    return s;
  }

  std::optional<IntOrPercent> IntOrPct(const char* key) {
    const json* v = Find(key);
    if (!v) return std::nullopt;
    std::optional<IntOrPercent> out;
    bool ok = false;
    if (v->is_string()) {
      out = ParsePercent(v->get<std::string>());
      ok = out.has_value();
    } else if (v->is_number_integer()) {
      out = IntOrPercent{AsInt64(*v), false};
      ok = out->value >= 0;
    }
    if (!ok)
      errors_.push_back(
          FieldError::Invalid(Path(key), *v, "must be an integer >= 0 or a percentage between 0% and 100%"));
    return out;
  }

  // The object at `key`, or null when absent or (reported) not an object.
  const json* Object(const char* key) {
    const json* v = Find(key);
    if (v && !v->is_object()) {
      errors_.push_back(TypeError(Path(key), *v, "object"));
      return nullptr;
    }
    return v;
  }

  void WarnUnknown(std::initializer_list<const char*> known, std::vector<std::string>& warnings) const {
    for (auto it = obj_.begin(); it != obj_.end(); ++it) {
      const bool is_known =
          std::any_of(known.begin(), known.end(), [&](const char* k) { return it.key() == std::string_view(k); });
      if (!is_known) warnings.push_back("unknown field \"" + path_ + "." + it.key() + "\"");
    }
  }

 private:
  const json& obj_;
  std::string path_;
  std::vector<FieldError>& errors_;
};

std::optional<std::string> ReadModel(Reader& r, std::vector<FieldError>& errors) {
  const json* v = r.Find("model");
  if (!v) {
    r.Require("model");
    return std::nullopt;
  }
  if (!v->is_string()) {
    errors.push_back(TypeError("spec.model", *v, "string"));
    return std::nullopt;
  }
  const auto& m = v->get_ref<const std::string&>();
  if (m.size() > kMaxModelLength)
    errors.push_back(FieldError::TooLong("spec.model", kMaxModelLength));
  else if (m.empty() || HasWhitespaceOrControl(m))
    errors.push_back(
        FieldError::Invalid("spec.model", *v, "must be a non-empty string with no whitespace or control characters"));
  return m;
}

Strategy ReadStrategy(const json& obj, ParsedModelService& out) {
  Strategy s;
  Reader r(obj, "spec.strategy", out.errors);
  r.WarnUnknown({"type", "rollingUpdate"}, out.warnings);
  if (const json* t = r.Find("type")) {
    if (!t->is_string())
      out.errors.push_back(TypeError("spec.strategy.type", *t, "string"));
    else if (*t == kStrategyRollingUpdate)
      s.type = StrategyType::kRollingUpdate;
    else if (*t == kStrategyRecreate)
      s.type = StrategyType::kRecreate;
    else
      out.errors.push_back(
          FieldError::Unsupported("spec.strategy.type", *t, {kStrategyRollingUpdate, kStrategyRecreate}));
  }
  if (const json* ru = r.Object("rollingUpdate")) {
    Reader rr(*ru, "spec.strategy.rollingUpdate", out.errors);
    rr.WarnUnknown({"maxSurge", "maxUnavailable"}, out.warnings);
    s.rolling_update = RollingUpdate{rr.IntOrPct("maxSurge"), rr.IntOrPct("maxUnavailable")};
  }
  return s;
}

Autoscaling ReadAutoscaling(const json& obj, ParsedModelService& out) {
  Autoscaling a;
  Reader r(obj, "spec.autoscaling", out.errors);
  r.WarnUnknown({"mode", "minReplicas", "maxReplicas", "targetQueueLength"}, out.warnings);
  if (const json* m = r.Find("mode")) {
    if (!m->is_string())
      out.errors.push_back(TypeError("spec.autoscaling.mode", *m, "string"));
    else if (*m == kAutoscalingModeController)
      a.mode = AutoscalingMode::kController;
    else if (*m == kAutoscalingModeHPA)
      a.mode = AutoscalingMode::kHPA;
    else
      out.errors.push_back(
          FieldError::Unsupported("spec.autoscaling.mode", *m, {kAutoscalingModeController, kAutoscalingModeHPA}));
  }
  a.min_replicas = r.Int("minReplicas", kMinReplicas, kMaxReplicas);
  r.Require("maxReplicas");
  a.max_replicas = r.Int("maxReplicas", kMinReplicas, kMaxReplicas);
  r.Require("targetQueueLength");
  a.target_queue_length = r.Int("targetQueueLength", 1, std::nullopt);
  return a;
}

// spec.rollout (issue 15): timeoutSeconds 30..3600, rollback Manual | Automatic.
Rollout ReadRollout(const json& obj, ParsedModelService& out) {
  Rollout ro;
  Reader r(obj, "spec.rollout", out.errors);
  r.WarnUnknown({"timeoutSeconds", "rollback"}, out.warnings);
  ro.timeout_seconds = r.Int("timeoutSeconds", kMinRolloutTimeoutSeconds, kMaxRolloutTimeoutSeconds);
  if (const json* p = r.Find("rollback")) {
    if (!p->is_string())
      out.errors.push_back(TypeError("spec.rollout.rollback", *p, "string"));
    else if (*p == kRollbackManual)
      ro.rollback = RollbackPolicy::kManual;
    else if (*p == kRollbackAutomatic)
      ro.rollback = RollbackPolicy::kAutomatic;
    else
      out.errors.push_back(FieldError::Unsupported("spec.rollout.rollback", *p, {kRollbackManual, kRollbackAutomatic}));
  }
  return ro;
}

constexpr std::array<std::string_view, 23> kFieldOrder = {
    "apiVersion",     "kind",        "metadata", "spec",        "model",       "version",           "image",
    "replicas",       "port",        "gpus",     "strategy",    "type",        "rollingUpdate",     "maxSurge",
    "maxUnavailable", "autoscaling", "mode",     "minReplicas", "maxReplicas", "targetQueueLength", "rollout",
    "timeoutSeconds", "rollback"};

void ReadSpec(const json& spec, ParsedModelService& out);

}  // namespace

json IntOrPercent::ToJson() const { return percent ? json(std::to_string(value) + "%") : json(value); }

const char* ToString(StrategyType type) {
  return type == StrategyType::kRecreate ? kStrategyRecreate : kStrategyRollingUpdate;
}

const char* ToString(AutoscalingMode mode) {
  return mode == AutoscalingMode::kHPA ? kAutoscalingModeHPA : kAutoscalingModeController;
}

const char* ToString(RollbackPolicy policy) {
  return policy == RollbackPolicy::kAutomatic ? kRollbackAutomatic : kRollbackManual;
}

ParsedModelService ParseModelService(const json& object) {
  ParsedModelService out;
  if (!object.is_object()) {
    out.errors.push_back(TypeError("<root>", object, "object"));
    return out;
  }
  for (const char* k : {"apiVersion", "kind"}) {
    auto it = object.find(k);
    if (it != object.end() && !it->is_string()) out.errors.push_back(TypeError(k, *it, "string"));
  }
  if (auto it = object.find("metadata"); it != object.end() && !it->is_object())
    out.errors.push_back(TypeError("metadata", *it, "object"));

  auto spec_it = object.find("spec");
  if (spec_it == object.end()) {
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

ParsedModelService ParseSpec(const json& spec) {
  ParsedModelService out;
  ReadSpec(spec, out);
  return out;
}

namespace {

void ReadSpec(const json& spec, ParsedModelService& out) {
  Reader r(spec, "spec", out.errors);
  r.WarnUnknown({"model", "version", "image", "replicas", "port", "gpus", "strategy", "autoscaling", "rollout"},
                out.warnings);
  ModelServiceSpec& s = out.spec;
  s.model = ReadModel(r, out.errors);
  s.version = r.String("version", 0, kMaxVersionLength);
  s.image = r.String("image", 1, kMaxImageLength);
  s.replicas = r.Int("replicas", kMinReplicas, kMaxReplicas);
  s.port = r.Int("port", kMinPort, kMaxPort);
  s.gpus = r.Int("gpus", kMinGpus, kMaxGpus);
  if (const json* st = r.Object("strategy")) s.strategy = ReadStrategy(*st, out);
  if (const json* as = r.Object("autoscaling")) s.autoscaling = ReadAutoscaling(*as, out);
  if (const json* ro = r.Object("rollout")) s.rollout = ReadRollout(*ro, out);
}

}  // namespace

ModelServiceSpec ModelServiceSpec::Defaulted() const {
  ModelServiceSpec d = *this;
  if (d.autoscaling && !d.autoscaling->mode) d.autoscaling->mode = AutoscalingMode::kController;
  if (d.autoscaling && !d.autoscaling->min_replicas) d.autoscaling->min_replicas = kDefaultMinReplicas;
  if (!d.replicas) {
    d.replicas = kDefaultReplicas;
    if (d.autoscaling) {
      const int64_t min = *d.autoscaling->min_replicas;
      if (min >= kMinReplicas && min <= kMaxReplicas) d.replicas = min;
    }
  }
  if (!d.port) d.port = kDefaultPort;
  if (!d.gpus) d.gpus = kDefaultGpus;
  Strategy& st = d.strategy ? *d.strategy : d.strategy.emplace();
  if (!st.type) st.type = StrategyType::kRollingUpdate;
  if (*st.type == StrategyType::kRollingUpdate) {
    RollingUpdate& ru = st.rolling_update ? *st.rolling_update : st.rolling_update.emplace();
    if (!ru.max_surge) ru.max_surge = *ParsePercent(kDefaultMaxSurge);
    if (!ru.max_unavailable) ru.max_unavailable = IntOrPercent{ru.max_surge->IsZero() ? 1 : kDefaultMaxUnavailable};
  }
  Rollout& ro = d.rollout ? *d.rollout : d.rollout.emplace();
  if (!ro.timeout_seconds) ro.timeout_seconds = kDefaultRolloutTimeoutSeconds;
  if (!ro.rollback) ro.rollback = RollbackPolicy::kManual;
  return d;
}

json ModelServiceSpec::ToJson() const {
  json j = json::object();
  if (model) j["model"] = *model;
  if (version) j["version"] = *version;
  if (image) j["image"] = *image;
  if (replicas) j["replicas"] = *replicas;
  if (port) j["port"] = *port;
  if (gpus) j["gpus"] = *gpus;
  if (strategy) {
    json& st = j["strategy"] = json::object();
    if (strategy->type) st["type"] = ToString(*strategy->type);
    if (const auto& ru = strategy->rolling_update) {
      json& r = st["rollingUpdate"] = json::object();
      if (ru->max_surge) r["maxSurge"] = ru->max_surge->ToJson();
      if (ru->max_unavailable) r["maxUnavailable"] = ru->max_unavailable->ToJson();
    }
  }
  if (autoscaling) {
    json& a = j["autoscaling"] = json::object();
    if (autoscaling->mode) a["mode"] = ToString(*autoscaling->mode);
    if (autoscaling->min_replicas) a["minReplicas"] = *autoscaling->min_replicas;
    if (autoscaling->max_replicas) a["maxReplicas"] = *autoscaling->max_replicas;
    if (autoscaling->target_queue_length) a["targetQueueLength"] = *autoscaling->target_queue_length;
  }
  if (rollout) {
    json& ro = j["rollout"] = json::object();
    if (rollout->timeout_seconds) ro["timeoutSeconds"] = *rollout->timeout_seconds;
    if (rollout->rollback) ro["rollback"] = ToString(*rollout->rollback);
  }
  return j;
}

std::optional<int64_t> ParseReplicas(const json& value, std::vector<FieldError>& errors) {
  const json holder = {{"replicas", value}};
  return Reader(holder, "spec", errors).Int("replicas", kMinReplicas, kMaxReplicas);
}

size_t FieldRank(std::string_view name) {
  return static_cast<size_t>(std::find(kFieldOrder.begin(), kFieldOrder.end(), name) - kFieldOrder.begin());
}

}  // namespace ms::api
