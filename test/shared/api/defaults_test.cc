#include "shared/api/defaults.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "shared/api/spec.h"
#include "shared/api/validation.h"
#include "test/support/modelservice_corpus.h"
#include "test/support/modelservice_schema.h"

namespace ms::api {
namespace {

using nlohmann::json;

json Apply(const json& obj) { return obj.patch(DefaultsPatch(obj)); }

TEST(Defaults, EmptyObjectGetsSpecThenEachDefault) {
  json obj = {{"apiVersion", "modelops.dev/v1"}, {"kind", "ModelService"}, {"metadata", {{"name", "a"}}}};
  EXPECT_EQ(DefaultsPatch(obj).dump(),
            R"([{"op":"add","path":"/spec","value":{}},{"op":"add","path":"/spec/runtime","value":"Custom"},)"
            R"({"op":"add","path":"/spec/replicas","value":1},)"
            R"({"op":"add","path":"/spec/port","value":8080},{"op":"add","path":"/spec/gpus","value":0},)"
            R"({"op":"add","path":"/spec/strategy","value":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0},)"
            R"("type":"RollingUpdate"}},)"
            R"({"op":"add","path":"/spec/rollout","value":{"rollback":"Manual","timeoutSeconds":600}}])");
}

TEST(Defaults, OnlyWhatIsMissingAndIdempotent) {
  json obj = {{"spec", {{"model", "m"}, {"replicas", 3}, {"strategy", {{"rollingUpdate", {{"maxSurge", 2}}}}}}}};
  auto patch = DefaultsPatch(obj);
  EXPECT_EQ(patch.dump(),
            R"([{"op":"add","path":"/spec/runtime","value":"Custom"},{"op":"add","path":"/spec/port","value":8080},)"
            R"({"op":"add","path":"/spec/gpus","value":0},)"
            R"({"op":"add","path":"/spec/strategy/type","value":"RollingUpdate"},)"
            R"({"op":"add","path":"/spec/strategy/rollingUpdate/maxUnavailable","value":0},)"
            R"({"op":"add","path":"/spec/rollout","value":{"rollback":"Manual","timeoutSeconds":600}}])");
  json once = Apply(obj);
  EXPECT_TRUE(DefaultsPatch(once).empty()) << DefaultsPatch(once).dump();
  EXPECT_EQ(once, DefaultedObject(obj));
  EXPECT_EQ(once["spec"]["replicas"], 3);
}

TEST(Defaults, DependentDefaults) {
  // Recreate gets no rollingUpdate.
  json recreate = {{"spec", {{"model", "m"}, {"strategy", {{"type", "Recreate"}}}}}};
  EXPECT_FALSE(Apply(recreate)["spec"]["strategy"].contains("rollingUpdate"));
  // replicas follows autoscaling.minReplicas.
  json as = {
      {"spec", {{"model", "m"}, {"autoscaling", {{"minReplicas", 3}, {"maxReplicas", 9}, {"targetQueueLength", 5}}}}}};
  EXPECT_EQ(Apply(as)["spec"]["replicas"], 3);
  json as2 = {{"spec", {{"model", "m"}, {"autoscaling", {{"maxReplicas", 9}, {"targetQueueLength", 5}}}}}};
  EXPECT_EQ(Apply(as2)["spec"]["autoscaling"]["minReplicas"], 1);
  EXPECT_EQ(Apply(as2)["spec"]["replicas"], 1);
  // autoscaling.mode defaults to Controller, listed before minReplicas; a mode given stays.
  EXPECT_EQ(Apply(as2)["spec"]["autoscaling"]["mode"], "Controller");
  EXPECT_EQ(DefaultsPatch(as2).dump(),
            R"([{"op":"add","path":"/spec/runtime","value":"Custom"},{"op":"add","path":"/spec/replicas","value":1},)"
            R"({"op":"add","path":"/spec/port","value":8080},)"
            R"({"op":"add","path":"/spec/gpus","value":0},)"
            R"({"op":"add","path":"/spec/strategy","value":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0},)"
            R"("type":"RollingUpdate"}},)"
            R"({"op":"add","path":"/spec/autoscaling/mode","value":"Controller"},)"
            R"({"op":"add","path":"/spec/autoscaling/minReplicas","value":1},)"
            R"({"op":"add","path":"/spec/rollout","value":{"rollback":"Manual","timeoutSeconds":600}}])");
  as2["spec"]["autoscaling"]["mode"] = "HPA";
  EXPECT_EQ(Apply(as2)["spec"]["autoscaling"]["mode"], "HPA");
  // maxSurge given as 0: maxUnavailable defaults to 1, so the result is valid.
  json surge0 = {{"spec", {{"model", "m"}, {"strategy", {{"rollingUpdate", {{"maxSurge", 0}}}}}}}};
  json applied = Apply(surge0);
  EXPECT_EQ(applied["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"], 1);
  EXPECT_TRUE(ValidateModelService(applied).ok());
}

// spec.rollout (issue 15): each missing default alone, in design.md's order.
TEST(Defaults, Rollout) {
  json obj = {{"spec", {{"model", "m"}, {"rollout", {{"rollback", "Automatic"}}}}}};
  EXPECT_EQ(Apply(obj)["spec"]["rollout"], json::parse(R"({"timeoutSeconds":600,"rollback":"Automatic"})"));
  obj["spec"]["rollout"] = json::object();
  json patch = DefaultsPatch(obj);
  ASSERT_GE(patch.size(), 2u);
  EXPECT_EQ(patch[patch.size() - 2].dump(), R"({"op":"add","path":"/spec/rollout/timeoutSeconds","value":600})");
  EXPECT_EQ(patch.back().dump(), R"({"op":"add","path":"/spec/rollout/rollback","value":"Manual"})");
  obj["spec"]["rollout"] = {{"timeoutSeconds", 30}, {"rollback", "Manual"}};
  for (const json& op : DefaultsPatch(obj))
    EXPECT_EQ(op["path"].get<std::string>().rfind("/spec/rollout", 0), std::string::npos);
}

TEST(Defaults, MalformedPartsAreLeftToValidation) {
  EXPECT_TRUE(DefaultsPatch(json{{"spec", "x"}}).empty());
  json bad_strategy = {{"spec",
                        {{"model", "m"},
                         {"runtime", "Custom"},
                         {"replicas", 1},
                         {"port", 1},
                         {"gpus", 0},
                         {"strategy", 7},
                         {"rollout", {{"timeoutSeconds", 600}, {"rollback", "Manual"}}}}}};
  EXPECT_TRUE(DefaultsPatch(bad_strategy).empty());
  EXPECT_TRUE(DefaultsPatch(json::array()).empty());
}

TEST(Defaults, DefaultedObjectsAreValidForEveryValidInput) {
  for (const char* text :
       {R"({"spec":{"model":"m"}})", R"({"spec":{"model":"m","strategy":{}}})",
        R"({"spec":{"model":"m","strategy":{"type":"RollingUpdate","rollingUpdate":{}}}})",
        R"({"spec":{"model":"m","autoscaling":{"maxReplicas":2,"targetQueueLength":1}}})",
        R"({"spec":{"model":"m","autoscaling":{"mode":"HPA","maxReplicas":2,"targetQueueLength":1}}})",
        R"({"spec":{"model":"m","rollout":{}}})"}) {
    json applied = Apply(json::parse(text));
    auto out = ValidateModelService(applied);
    EXPECT_TRUE(out.ok()) << text << ": " << JoinErrors(out.errors);
  }
}

// The whole patch applies as RFC 6902 says, one operation after the other:
// each adds a member its parent object lacked (so no value is ever replaced),
// and the end is exactly the defaulted object.
TEST(Defaults, PatchAddsOnlyWhatIsMissingAndIsIdempotent) {
  size_t patched = 0;
  for (const json& obj : test::ModelServiceCorpus()) {
    const json patch = DefaultsPatch(obj);
    json doc = obj;
    for (const json& op : patch) {
      ASSERT_EQ(op["op"], "add") << patch.dump();
      const json::json_pointer path(op["path"].get<std::string>());
      ASSERT_FALSE(doc.contains(path)) << op.dump() << " on " << doc.dump();
      ASSERT_TRUE(doc.contains(path.parent_pointer()) && doc[path.parent_pointer()].is_object()) << op.dump();
      doc = doc.patch(json::array({op}));
    }
    EXPECT_EQ(doc, obj.patch(patch));
    EXPECT_EQ(doc, DefaultedObject(obj)) << obj.dump();
    // Reinvocation on the result: nothing left to add.
    EXPECT_TRUE(DefaultsPatch(doc).empty()) << obj.dump() << " -> " << DefaultsPatch(doc).dump();
    // Minimal: every value added is a default of the typed spec (nothing
    // else of the object changes), and each missing default is added where
    // its parent is an object.
    if (!obj.contains("spec") || !obj["spec"].is_object()) continue;
    const json defaults = api::ToJsonValue(api::ParseModelService(obj).spec.Defaulted()).flatten();
    const json before = obj["spec"].flatten(), after = doc["spec"].flatten();
    for (const auto& [path, value] : after.items()) {
      if (before.contains(path)) {
        EXPECT_EQ(before[path], value) << path;
      } else {
        ASSERT_TRUE(defaults.contains(path)) << "added " << path << " to " << obj.dump();
        EXPECT_EQ(defaults[path], value) << path;
      }
    }
    for (const auto& [path, value] : defaults.items()) {
      const json::json_pointer p(path);
      bool parent_is_object = true;
      for (json::json_pointer q = p.parent_pointer(); !q.empty(); q = q.parent_pointer()) {
        if (obj["spec"].contains(q) && !obj["spec"][q].is_object()) parent_is_object = false;
      }
      if (parent_is_object && !obj["spec"].contains(p)) {
        EXPECT_EQ(after.value(path, json()), value) << path << " missing from " << obj.dump();
      }
    }
    patched += !patch.empty();
  }
  EXPECT_GT(patched, 1000u);
}

// The patch's definition, computed the slow way: json::diff from the spec to
// the defaulted object's spec, ordered by the fields' ranks.
json ReferencePatch(const json& obj) {
  json patch = json::array();
  if (!obj.is_object()) return patch;
  const auto it = obj.find("spec");
  if (it != obj.end() && !it->is_object()) return patch;
  if (it == obj.end()) patch.push_back({{"op", "add"}, {"path", "/spec"}, {"value", json::object()}});
  const json spec = it == obj.end() ? json::object() : *it;
  json diff = json::diff(spec, DefaultedObject(obj)["spec"], "/spec");
  auto ranks = [](const json& op) {
    std::vector<size_t> out;
    const std::string path = op["path"];
    for (size_t start = 1; start <= path.size();) {
      size_t end = std::min(path.find('/', start), path.size());
      out.push_back(FieldRank(std::string_view(path).substr(start, end - start)));
      start = end + 1;
    }
    return out;
  };
  std::stable_sort(diff.begin(), diff.end(), [&](const json& a, const json& b) { return ranks(a) < ranks(b); });
  for (auto& op : diff) patch.push_back(op);
  return patch;
}

TEST(Defaults, PatchIsTheOrderedDiffToTheDefaultedObject) {
  size_t patched = 0;
  for (const json& obj : test::ModelServiceCorpus()) {
    const json patch = DefaultsPatch(obj);
    ASSERT_EQ(patch.dump(), ReferencePatch(obj).dump()) << obj.dump();
    patched += !patch.empty();
  }
  EXPECT_GT(patched, 1000u);
}

}  // namespace
}  // namespace ms::api
