#include "api/defaults.h"

#include <algorithm>
#include <string>
#include <vector>

#include "api/spec.h"
#include "base/json_text.h"

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

// One `add` operation of the patch: a default the spec lacks.
struct Addition {
  std::string path;
  std::vector<size_t> ranks;
  const json* value;
};

// {"op": "add", "path": path, "value": value}, built member by member
// (nlohmann's initializer lists cost more than the rest of the patch).
json AddOperation(std::string path, const json& value) {
  json op(json::value_t::object);
  op["op"] = "add";
  op["path"] = std::move(path);
  op["value"] = value;
  return op;
}

// RFC 6901: "~" is written "~0" and "/" is written "~1".
std::string EscapePointerToken(const std::string& token) {
  std::string out;
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

// The operations json::diff(target, AddMissing(target, defaults)) gives, in
// its order: at each level the members present on both sides first (where
// both are objects, descending), then those only `defaults` has, each by
// name. Without copying the spec or diffing the members nothing is added to.
void AddOperations(JsonRef target, const json& defaults, const std::string& path, std::vector<Addition>& out) {
  for (auto it = defaults.begin(); it != defaults.end(); ++it) {
    auto have = target.find(it.key());
    if (have && have->is_object() && it->is_object())
      AddOperations(*have, *it, path + "/" + EscapePointerToken(it.key()), out);
  }
  for (auto it = defaults.begin(); it != defaults.end(); ++it) {
    if (target.find(it.key())) continue;
    std::string p = path + "/" + EscapePointerToken(it.key());
    auto ranks = Ranks(p);
    out.push_back({std::move(p), std::move(ranks), &*it});
  }
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

namespace {

// The operations of the defaults patch of `object`, in order: the defaulted
// spec they point into is kept in `defaults`. Nothing for an object that is
// not a JSON object or whose spec is not one (validation denies it).
std::vector<Addition> PatchOperations(JsonRef object, json& defaults) {
  static const json kEmptyObject = json::object();
  std::vector<Addition> adds;
  if (!object.is_object()) return adds;
  // `spec` itself first when absent, then each default inside it (rather
  // than one operation adding the whole defaulted spec).
  JsonRef spec = kEmptyObject;
  if (auto it = object.find("spec"); !it) {
    adds.push_back({"/spec", {}, &kEmptyObject});
  } else if (it->is_object()) {
    spec = *it;
  } else {
    return adds;
  }
  defaults = ParseSpec(spec).spec.Defaulted().ToJson();
  const size_t first = adds.size();
  AddOperations(spec, defaults, "/spec", adds);
  // Ordered as design.md §2 lists the fields, so a patch reads like the
  // spec. Only additions of distinct members: any order applies the same.
  std::stable_sort(adds.begin() + static_cast<std::ptrdiff_t>(first), adds.end(),
                   [](const Addition& a, const Addition& b) { return a.ranks < b.ranks; });
  return adds;
}

}  // namespace

json DefaultsPatch(JsonRef object) {
  json defaults;
  json patch = json::array();
  for (auto& a : PatchOperations(object, defaults)) patch.push_back(AddOperation(std::move(a.path), *a.value));
  return patch;
}

std::string DefaultsPatchText(JsonRef object) {
  json defaults;
  const std::vector<Addition> adds = PatchOperations(object, defaults);
  if (adds.empty()) return {};
  // {"op":"add","path":...,"value":...}: members in key order, as nlohmann
  // writes the object DefaultsPatch builds.
  std::string out = "[";
  for (const Addition& a : adds) {
    if (out.size() > 1) out += ',';
    out += R"({"op":"add","path":)";
    AppendJsonString(out, a.path);
    out += R"(,"value":)";
    out += a.value->dump(-1, ' ', false, json::error_handler_t::replace);
    out += '}';
  }
  out += ']';
  return out;
}

}  // namespace ms::api
