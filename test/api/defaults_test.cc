#include "api/defaults.h"

#include <gtest/gtest.h>

#include "api/validation.h"

namespace ms {
namespace {

using nlohmann::json;

json Apply(const json& obj) { return obj.patch(DefaultsPatch(obj).ops()); }

TEST(Defaults, EmptyObjectGetsSpecThenEachDefault) {
  json obj = {{"apiVersion", "modelops.dev/v1"}, {"kind", "ModelService"}, {"metadata", {{"name", "a"}}}};
  EXPECT_EQ(DefaultsPatch(obj).Dump(),
            R"([{"op":"add","path":"/spec","value":{}},{"op":"add","path":"/spec/replicas","value":1},)"
            R"({"op":"add","path":"/spec/port","value":8080},{"op":"add","path":"/spec/gpus","value":0},)"
            R"({"op":"add","path":"/spec/strategy","value":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0},)"
            R"("type":"RollingUpdate"}}])");
}

TEST(Defaults, OnlyWhatIsMissingAndIdempotent) {
  json obj = {{"spec", {{"model", "m"}, {"replicas", 3}, {"strategy", {{"rollingUpdate", {{"maxSurge", 2}}}}}}}};
  auto patch = DefaultsPatch(obj);
  EXPECT_EQ(patch.Dump(),
            R"([{"op":"add","path":"/spec/port","value":8080},{"op":"add","path":"/spec/gpus","value":0},)"
            R"({"op":"add","path":"/spec/strategy/type","value":"RollingUpdate"},)"
            R"({"op":"add","path":"/spec/strategy/rollingUpdate/maxUnavailable","value":0}])");
  json once = Apply(obj);
  EXPECT_TRUE(DefaultsPatch(once).empty()) << DefaultsPatch(once).Dump();
  EXPECT_EQ(once, WithDefaults(obj));
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
  // maxSurge given as 0: maxUnavailable defaults to 1, so the result is valid.
  json surge0 = {{"spec", {{"model", "m"}, {"strategy", {{"rollingUpdate", {{"maxSurge", 0}}}}}}}};
  json applied = Apply(surge0);
  EXPECT_EQ(applied["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"], 1);
  SchemaValidator schema;
  EXPECT_TRUE(ValidateModelService(applied, schema).ok());
}

TEST(Defaults, MalformedPartsAreLeftToValidation) {
  EXPECT_TRUE(DefaultsPatch(json{{"spec", "x"}}).empty());
  json bad_strategy = {{"spec", {{"model", "m"}, {"replicas", 1}, {"port", 1}, {"gpus", 0}, {"strategy", 7}}}};
  EXPECT_TRUE(DefaultsPatch(bad_strategy).empty());
  EXPECT_TRUE(DefaultsPatch(json::array()).empty());
}

TEST(Defaults, DefaultedObjectsAreValidForEveryValidInput) {
  SchemaValidator schema;
  for (const char* text : {R"({"spec":{"model":"m"}})", R"({"spec":{"model":"m","strategy":{}}})",
                           R"({"spec":{"model":"m","strategy":{"type":"RollingUpdate","rollingUpdate":{}}}})",
                           R"({"spec":{"model":"m","autoscaling":{"maxReplicas":2,"targetQueueLength":1}}})"}) {
    json applied = Apply(json::parse(text));
    auto out = ValidateModelService(applied, schema);
    EXPECT_TRUE(out.ok()) << text << ": " << JoinErrors(out.errors);
  }
}

}  // namespace
}  // namespace ms
