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

std::string DefaultsPatchText(text::JsonRef object) {
  if (!object.is_object()) return {};
  static const json kEmptyObject = json::object();
  AddPatchWriter w;
  // `spec` itself first when absent, then each default inside it (rather
  // than one operation adding the whole defaulted spec).
  text::JsonRef spec = kEmptyObject;
  if (auto it = object.find("spec"); !it) {
    w.Add("spec", kEmptyObject);
  } else if (it->is_object()) {
    spec = *it;
  } else {
    return {};  // validation denies it
  }
  const AddPatchWriter::Scope scope(w, "spec");
  AppendDefaultsPatch(spec, ParseSpec(spec).spec.Defaulted(), w);
  return std::move(w).Finish();
}

json DefaultsPatch(text::JsonRef object) {
  const std::string text = DefaultsPatchText(object);
  return text.empty() ? json::array() : json::parse(text);
}

}  // namespace ms::api
