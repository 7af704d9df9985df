#include "shared/api/spec.h"

#include "shared/api/field_reader.h"
#include "shared/api/runtimes.h"

namespace ms::api {

using nlohmann::json;

namespace {

// `text` copied with the reader's padding after it.
std::vector<char> Padded(std::string_view text) {
  std::vector<char> buf(text.size() + text::JsonReader::kPadding, '\0');
  std::copy(text.begin(), text.end(), buf.begin());
  return buf;
}

// metadata's name and generateName, as their text.
bool ReadMetadata(text::JsonReader& in, ParsedModelService& out) {
  out.name.reset();
  out.generate_name.reset();
  if (in.Peek() != text::JsonReader::Kind::kObject) {
    out.errors.push_back(TypeError("metadata", in, "object"));
    return in.ok();
  }
  in.BeginObject();
  std::string_view key;
  while (in.NextRawKey(key)) {
    if (text::RawKeyEquals(key, "name")) {
      if (!in.Capture(out.name.emplace())) return false;
    } else if (text::RawKeyEquals(key, "generateName")) {
      if (!in.Capture(out.generate_name.emplace())) return false;
    } else if (!in.Skip()) {
      return false;
    }
  }
  return in.ok();
}

// apiVersion or kind: a string, as its text.
void ReadTypeMember(text::JsonReader& in, std::string_view key, std::optional<std::string_view>& out,
                    std::vector<FieldError>& errors) {
  out.reset();
  if (in.Peek() != text::JsonReader::Kind::kString) {
    std::string_view raw;
    in.Capture(raw);
    out = raw;
    errors.push_back(TypeError(std::string(key), nlohmann::json::parse(raw, nullptr, false), "string"));
    return;
  }
  in.Capture(out.emplace());
}

}  // namespace

ParsedModelService ReadModelService(text::JsonReader& in) {
  using Kind = text::JsonReader::Kind;
  ParsedModelService out;
  // A denial has a few errors: one allocation for them rather than one
  // per doubling, each moving the errors before it (measured: about 1,000
  // instructions of a review denied with four errors). Six of 160 bytes
  // stay within the sizes glibc's malloc serves from its per-thread cache
  // (up to 1,032 bytes; eight took 400 instructions more of every review).
  out.errors.reserve(6);
  if (in.Peek() != Kind::kObject) {
    out.errors.push_back(TypeError("<root>", in, "object"));
    return out;
  }
  const char* start = in.Position();
  out.object = true;
  static constexpr std::array<std::string_view, 4> kFields = {"apiVersion", "kind", "metadata", "spec"};
  static constexpr std::array<size_t, 1> kRequired = {3};
  FieldReader r(in, "", {out.errors, out.warnings});
  for (size_t f = 0; r.Next(kFields, f);) {
    switch (f) {
      case 0:
        ReadTypeMember(in, kFields[f], out.api_version, out.errors);
        break;
      case 1:
        ReadTypeMember(in, kFields[f], out.kind, out.errors);
        break;
      case 2:
        ReadMetadata(in, out);
        break;
      default: {
        out.spec = {};
        in.Peek();
        out.spec_begin = static_cast<size_t>(in.Position() - start);
        if (in.Peek() != Kind::kObject) {
          out.spec_form = ParsedModelService::Spec::kOther;
          out.errors.push_back(TypeError("spec", in, "object"));
        } else {
          out.spec_form = ParsedModelService::Spec::kObject;
          FieldReader spec(in, "spec", {out.errors, out.warnings});
          ReadFields(spec, out.spec);
        }
        out.spec_end = static_cast<size_t>(in.Position() - start);
        break;
      }
    }
  }
  r.Finish(kFields, kRequired);
  return out;
}

ParsedModelService ParseModelService(text::JsonText json) {
  const std::string_view json_text = json.bytes;
  std::vector<char> buf = Padded(json_text);
  text::JsonReader in(buf.data(), json_text.size(), kMaxObjectDepth);
  ParsedModelService out = ReadModelService(in);
  out.api_version = out.kind = out.name = out.generate_name = std::nullopt;  // views into `buf`
  if (!in.ok() || !in.AtEnd()) {
    out = {};
    out.errors.push_back(FieldError::Invalid(
        "<root>", nlohmann::json(std::string(json_text.substr(0, 64))),
        in.too_deep() ? "nests deeper than " + std::to_string(kMaxObjectDepth) + " levels" : "is not JSON"));
  }
  return out;
}

ParsedModelService ParseModelService(const nlohmann::json& object) {
  const std::string text = object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return ParseModelService(text::JsonText{text});
}

ParsedModelService ParseSpec(const nlohmann::json& spec) {
  ParsedModelService out;
  if (!spec.is_object()) return out;
  const std::string text = spec.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::vector<char> buf = Padded(text);
  text::JsonReader in(buf.data(), text.size(), kMaxObjectDepth);
  out.object = true;
  out.spec_form = ParsedModelService::Spec::kObject;
  FieldReader r(in, "spec", {out.errors, out.warnings});
  ReadFields(r, out.spec);
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

std::optional<int64_t> ParseReplicas(text::JsonReader& in, std::vector<FieldError>& errors) {
  static const std::string kPath = "spec.replicas";
  return ReadValue(in, kPath, ModelServiceSpec::kReplicas, errors);
}

}  // namespace ms::api
