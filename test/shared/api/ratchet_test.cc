// Ratcheting per value (ratchet.h): which errors of an UPDATE are about
// values unchanged from oldObject, on paths as the parser and the rules
// write them (members, map keys that hold '.', ']' or digits, list
// indices), for errors with and without the values they read.
#include "shared/api/ratchet.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ms::api {
namespace {

using nlohmann::json;

// The paths of the errors RatchetErrors keeps.
std::vector<std::string> Kept(std::vector<FieldError> errors, const json& now, const json& before) {
  RatchetErrors(errors, now, before);
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.path);
  return out;
}

FieldError At(const std::string& path) { return FieldError::Invalid(path, json(1), "bad"); }

TEST(Ratchet, AnErrorIsKeptWhenTheValueItIsAboutChanged) {
  const json before = json::parse(R"({"spec":{"model":"m","replicas":0,"image":"i",
    "nodeSelector":{"a.b/c":"x","k]y":"1","7":"z"},"env":[{"name":"A"},{"name":"B"}]}})");
  json now = before;
  now["spec"]["image"] = "j";
  now["spec"]["nodeSelector"]["new"] = "n";
  const std::vector<FieldError> errors = {At("spec.replicas"),          At("spec.nodeSelector[a.b/c]"),
                                          At("spec.nodeSelector[k]y]"), At("spec.nodeSelector[7]"),
                                          At("spec.env[1].name"),       At("spec.image")};
  EXPECT_EQ(Kept(errors, now, before), (std::vector<std::string>{"spec.image"}));
  now["spec"]["nodeSelector"]["k]y"] = "2";
  now["spec"]["env"][0]["name"] = "C";  // an atomic list: any change re-validates every item
  EXPECT_EQ(Kept(errors, now, before),
            (std::vector<std::string>{"spec.nodeSelector[k]y]", "spec.env[1].name", "spec.image"}));
}

TEST(Ratchet, RulesBetweenFieldsAndMapEntriesReadWhatTheyName) {
  const json before = json::parse(R"({"spec":{"gpus":0,"autoscaling":{"minReplicas":5,"maxReplicas":3},
    "podLabels":{"!bad":"v","ok":"v"}}})");
  json now = before;
  now["spec"]["podLabels"]["other"] = "w";
  static constexpr std::string_view kMinMax[] = {"spec.autoscaling.minReplicas", "spec.autoscaling.maxReplicas"};
  static constexpr std::string_view kGpu[] = {"spec.autoscaling.targetGPUUtilization", "spec.gpus"};
  std::vector<FieldError> errors;
  errors.push_back(At("spec.autoscaling.minReplicas").Reading(kMinMax));
  errors.push_back(At("spec.podLabels").OfEntry("!bad"));
  errors.push_back(At("spec.autoscaling.targetGPUUtilization").Reading(kGpu));
  EXPECT_EQ(Kept(errors, now, before), std::vector<std::string>{});
  now["spec"]["gpus"] = 1;  // read by the third rule only
  now["spec"]["podLabels"]["!bad"] = "w";
  EXPECT_EQ(Kept(errors, now, before),
            (std::vector<std::string>{"spec.podLabels", "spec.autoscaling.targetGPUUtilization"}));
}

// A Required error is about the object lacking the member, as `required`
// is that object's keyword; a value absent from both is unchanged; a path
// that names nothing either object has is reported.
TEST(Ratchet, RequiredIsTheParentsAndAbsenceIsAValue) {
  const json before = json::parse(R"({"spec":{"strategy":{"type":"Recreate"},"replicas":2}})");
  json now = before;
  EXPECT_EQ(Kept({FieldError::Required("spec.model"), FieldError::Required("spec.strategy.x"), At("spec.absent")}, now,
                 before),
            std::vector<std::string>{});
  now["spec"]["replicas"] = 3;
  EXPECT_EQ(Kept({FieldError::Required("spec.model"), FieldError::Required("spec.strategy.x"), At("spec.absent")}, now,
                 before),
            (std::vector<std::string>{"spec.model"}));
  EXPECT_EQ(Kept({At("<root>"), At("spec.nodeSelector[unclosed")}, before, before),
            (std::vector<std::string>{"<root>", "spec.nodeSelector[unclosed"}));
}

}  // namespace
}  // namespace ms::api
