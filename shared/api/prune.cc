#include "shared/api/prune.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "shared/api/schema.h"

namespace ms::api {

using nlohmann::json;

namespace {

const json& Schema() {
  static const json schema = json::parse(kModelServiceSchemaJson);
  return schema;
}

// The schema of member `key` of an object described by `s`, or null.
const json* MemberSchema(const json* s, const std::string& key) {
  if (s == nullptr || !s->is_object()) return nullptr;
  if (auto p = s->find("properties"); p != s->end() && p->contains(key)) return &(*p)[key];
  if (auto a = s->find("additionalProperties"); a != s->end() && a->is_object()) return &*a;
  return nullptr;
}

bool PreservesUnknown(const json* s) {
  return s != nullptr && s->is_object() && s->value("x-kubernetes-preserve-unknown-fields", false);
}

std::string Child(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

// pruning.prune: a member without a schema goes; a field that preserves
// unknown fields keeps them (its known properties are still pruned).
void Prune(json& v, const json* s, const std::string& path, std::vector<std::string>& unknown) {
  const bool preserve = PreservesUnknown(s);
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end();) {
      const json* member = MemberSchema(s, it.key());
      if (member != nullptr) {
        Prune(*it, member, Child(path, it.key()), unknown);
      } else if (!preserve) {
        unknown.push_back(Child(path, it.key()));
        it = v.erase(it);
        continue;
      }
      ++it;
    }
  } else if (v.is_array()) {
    const json* items = s != nullptr && s->is_object() && s->contains("items") ? &(*s)["items"] : nullptr;
    for (size_t i = 0; i < v.size(); ++i) Prune(v[i], items, path + "[" + std::to_string(i) + "]", unknown);
  }
}

// The fields of an ObjectMeta (metav1), which the API server keeps in metadata.
constexpr std::array<std::string_view, 15> kObjectMetaFields = {"name",
                                                                "generateName",
                                                                "namespace",
                                                                "selfLink",
                                                                "uid",
                                                                "resourceVersion",
                                                                "generation",
                                                                "creationTimestamp",
                                                                "deletionTimestamp",
                                                                "deletionGracePeriodSeconds",
                                                                "labels",
                                                                "annotations",
                                                                "ownerReferences",
                                                                "finalizers",
                                                                "managedFields"};

void DropNullsIn(json& v, const json* s) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end();) {
      const json* member = MemberSchema(s, it.key());
      if (it->is_null() && member != nullptr) {
        it = v.erase(it);
        continue;
      }
      DropNullsIn(*it, member);
      ++it;
    }
  } else if (v.is_array()) {
    const json* items = s != nullptr && s->is_object() && s->contains("items") ? &(*s)["items"] : nullptr;
    for (auto& e : v) DropNullsIn(e, items);
  }
}

}  // namespace

std::vector<std::string> PruneUnknownFields(json& object) {
  std::vector<std::string> unknown;
  if (!object.is_object()) return unknown;
  const json& schema = Schema();
  for (auto it = object.begin(); it != object.end();) {
    const std::string key = it.key();
    if (key == "metadata") {
      if (it->is_object()) {
        for (auto m = it->begin(); m != it->end();) {
          const bool known =
              std::find(kObjectMetaFields.begin(), kObjectMetaFields.end(), m.key()) != kObjectMetaFields.end();
          if (known) {
            ++m;
            continue;
          }
          unknown.push_back("metadata." + m.key());
          m = it->erase(m);
        }
      }
    } else if (const json* member = MemberSchema(&schema, key)) {
      Prune(*it, member, key, unknown);
    } else {
      unknown.push_back(key);
      it = object.erase(it);
      continue;
    }
    ++it;
  }
  std::sort(unknown.begin(), unknown.end());
  return unknown;
}

void DropNulls(json& object) { DropNullsIn(object, &Schema()); }

std::string StrictDecodingError(const std::vector<std::string>& unknown_fields) {
  std::string out = "strict decoding error: ";
  for (size_t i = 0; i < unknown_fields.size(); ++i)
    out += (i ? ", " : "") + std::string("unknown field \"") + unknown_fields[i] + "\"";
  return out;
}

}  // namespace ms::api
