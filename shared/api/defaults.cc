#include "shared/api/defaults.h"

#include <string>

#include "shared/api/patch_text.h"
#include "shared/api/spec.h"

namespace ms::api {

using nlohmann::json;

namespace {

// Adds to `target` every member of `defaults` it lacks, descending into
// members that are objects on both sides; never replaces a value.
void AddMissing(json& target, const json& defaults) {
  for (auto it = defaults.begin(); it != defaults.end(); ++it) {
    auto have = target.find(it.key());
    if (have == target.end())
      target[it.key()] = *it;
    else if (have->is_object() && it->is_object())
      AddMissing(*have, *it);
  }
}

// The spec object with its typed defaults added where it has no value.
json DefaultedSpec(const json& spec) {
  json out = spec;
  AddMissing(out, ToJsonValue(ParseSpec(spec).spec.Defaulted()));
  return out;
}

}  // namespace

json DefaultedObject(const json& object) {
  if (!object.is_object()) return object;
  auto spec = object.find("spec");
  if (spec != object.end() && !spec->is_object()) return object;
  json out = object;
  out["spec"] = DefaultedSpec(spec == object.end() ? json::object() : *spec);
  return out;
}

std::string DefaultsPatchText(text::JsonText json) { return DefaultsPatchText(ParseModelService(json)); }

std::string DefaultsPatchText(const ParsedModelService& object) {
  if (!object.object || object.spec_form == ParsedModelService::Spec::kOther) return {};  // validation denies it
  AddPatchWriter w;
  // `spec` itself first when absent, then each default inside it (rather
  // than one operation adding the whole defaulted spec).
  if (object.spec_form == ParsedModelService::Spec::kAbsent) w.Add("spec", json::object());
  const AddPatchWriter::Scope scope(w, "spec");
  AppendDefaultsPatch(object.spec, object.spec.Defaulted(), w);
  return std::move(w).Finish();
}

json DefaultsPatch(const json& object) {
  const std::string object_text = object.dump(-1, ' ', false, json::error_handler_t::replace);
  const std::string text = DefaultsPatchText(text::JsonText{object_text});
  return text.empty() ? json::array() : json::parse(text);
}

}  // namespace ms::api
