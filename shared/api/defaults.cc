#include "api/defaults.h"

#include <algorithm>

#include "api/spec.h"

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

// The reference tokens of a JSON Pointer, ranked by FieldRank.
std::vector<size_t> Ranks(const std::string& pointer) {
  std::vector<size_t> ranks;
  size_t start = 1;
  while (start <= pointer.size()) {
    size_t end = pointer.find('/', start);
    if (end == std::string::npos) end = pointer.size();
    ranks.push_back(FieldRank(std::string_view(pointer).substr(start, end - start)));
    start = end + 1;
  }
  return ranks;
}

// The spec object with its typed defaults added where it has no value.
json DefaultedSpec(const json& spec) {
  json out = spec;
  AddMissing(out, ParseSpec(spec).spec.Defaulted().ToJson());
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

json DefaultsPatch(const json& object) {
  json patch = json::array();
  if (!object.is_object()) return patch;
  // `spec` itself first when absent, then each default inside it (rather
  // than one operation adding the whole defaulted spec).
  static const json kEmpty = json::object();
  const json* spec = &kEmpty;
  if (auto it = object.find("spec"); it == object.end()) {
    patch.push_back({{"op", "add"}, {"path", "/spec"}, {"value", json::object()}});
  } else if (it->is_object()) {
    spec = &*it;
  } else {
    return patch;  // validation denies it
  }
  json diff = json::diff(*spec, DefaultedSpec(*spec), "/spec");
  // json::diff lists members alphabetically; order them as design.md §2
  // lists the fields, so a patch reads like the spec. Only additions of
  // distinct members: any order applies the same.
  std::stable_sort(diff.begin(), diff.end(), [](const json& a, const json& b) {
    return Ranks(a["path"].get_ref<const std::string&>()) < Ranks(b["path"].get_ref<const std::string&>());
  });
  for (auto& op : diff) patch.push_back(std::move(op));
  return patch;
}

}  // namespace ms::api
