#include "shared/api/spec.h"

#include <gtest/gtest.h>

#include "shared/api/defaults.h"
#include "test/support/modelservice_corpus.h"

namespace ms::api {
namespace {

using nlohmann::json;

ModelServiceSpec Parse(const char* spec_json) { return ParseModelService(json{{"spec", json::parse(spec_json)}}).spec; }

TEST(Spec, ReadsEveryField) {
  auto parsed = ParseModelService(json::parse(R"({"apiVersion":"modelops.dev/v1","kind":"ModelService",
    "spec":{"model":"bert","version":"3","image":"img","runtime":"vLLM","replicas":2,"port":9000,"gpus":1,
            "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"50%","maxUnavailable":1}},
            "autoscaling":{"mode":"HPA","minReplicas":2,"maxReplicas":8,"targetQueueLength":5},
            "rollout":{"timeoutSeconds":120,"rollback":"Automatic"}}})"));
  EXPECT_TRUE(parsed.errors.empty()) << JoinErrors(parsed.errors);
  EXPECT_TRUE(parsed.warnings.empty());
  const ModelServiceSpec& s = parsed.spec;
  EXPECT_EQ(s.model, "bert");
  EXPECT_EQ(s.version, "3");
  EXPECT_EQ(s.image, "img");
  EXPECT_EQ(s.runtime, Runtime::kVLLM);
  EXPECT_EQ(s.replicas, 2);
  EXPECT_EQ(s.port, 9000);
  EXPECT_EQ(s.gpus, 1);
  ASSERT_TRUE(s.strategy && s.strategy->rolling_update);
  EXPECT_EQ(s.strategy->type, StrategyType::kRollingUpdate);
  EXPECT_EQ(s.strategy->rolling_update->max_surge, (IntOrPercent{50, true}));
  EXPECT_EQ(s.strategy->rolling_update->max_unavailable, (IntOrPercent{1, false}));
  ASSERT_TRUE(s.autoscaling);
  EXPECT_EQ(s.autoscaling->mode, AutoscalingMode::kHPA);
  EXPECT_EQ(s.autoscaling->min_replicas, 2);
  EXPECT_EQ(s.autoscaling->max_replicas, 8);
  EXPECT_EQ(s.autoscaling->target_queue_length, 5);
  // Nothing to default: Defaulted() is the identity and its JSON (ToJsonValue) is the spec.
  EXPECT_EQ(s.Defaulted(), s);
  EXPECT_EQ(
      ToJsonValue(s),
      json::parse(R"({"model":"bert","version":"3","image":"img","runtime":"vLLM","replicas":2,"port":9000,"gpus":1,
            "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"50%","maxUnavailable":1}},
            "autoscaling":{"mode":"HPA","minReplicas":2,"maxReplicas":8,"targetQueueLength":5},
            "rollout":{"timeoutSeconds":120,"rollback":"Automatic"}})"));
}

TEST(Spec, AutoscalingMode) {
  // Defaulted to Controller when autoscaling is set; never added without it.
  EXPECT_EQ(Parse(R"({"autoscaling":{"maxReplicas":9}})").Defaulted().autoscaling->mode, AutoscalingMode::kController);
  EXPECT_EQ(Parse(R"({"autoscaling":{"mode":"HPA","maxReplicas":9}})").Defaulted().autoscaling->mode,
            AutoscalingMode::kHPA);
  EXPECT_EQ(ToJsonValue(Parse(R"({"autoscaling":{"mode":"Controller","maxReplicas":9}})").Defaulted())["autoscaling"],
            json::parse(R"({"mode":"Controller","minReplicas":1,"maxReplicas":9})"));
  // Unsupported values and types, worded as strategy.type's; the field is then unset.
  auto parsed = ParseModelService(
      json::parse(R"({"spec":{"model":"m","autoscaling":{"mode":"hpa","maxReplicas":2,"targetQueueLength":1}}})"));
  EXPECT_FALSE(parsed.spec.autoscaling->mode);
  EXPECT_EQ(JoinErrors(parsed.errors),
            "spec.autoscaling.mode: Unsupported value: \"hpa\": supported values: \"Controller\", \"HPA\"");
  parsed = ParseModelService(
      json::parse(R"({"spec":{"model":"m","autoscaling":{"mode":1,"maxReplicas":2,"targetQueueLength":1}}})"));
  EXPECT_EQ(JoinErrors(parsed.errors), "spec.autoscaling.mode: Invalid value: 1: must be of type string, not integer");
}

TEST(Spec, WhatCannotBeReadIsUnsetAndReported) {
  auto parsed = ParseModelService(json::parse(
      R"({"spec":{"model":5,"replicas":"3","strategy":{"type":"Rolling","rollingUpdate":{"maxSurge":"150%"}},
                  "autoscaling":7}})"));
  EXPECT_FALSE(parsed.spec.model);
  EXPECT_FALSE(parsed.spec.replicas);
  ASSERT_TRUE(parsed.spec.strategy);
  EXPECT_FALSE(parsed.spec.strategy->type);
  EXPECT_FALSE(parsed.spec.strategy->rolling_update->max_surge);
  EXPECT_FALSE(parsed.spec.autoscaling);
  EXPECT_EQ(JoinErrors(parsed.errors),
            "spec.model: Invalid value: 5: must be of type string, not integer; "
            "spec.replicas: Invalid value: \"3\": must be of type integer, not string; "
            "spec.strategy.type: Unsupported value: \"Rolling\": supported values: \"RollingUpdate\", \"Recreate\"; "
            "spec.strategy.rollingUpdate.maxSurge: Invalid value: \"150%\": must be an integer >= 0 or a percentage "
            "between 0% and 100%; "
            "spec.autoscaling: Invalid value: 7: must be of type object, not integer");
  // Out of range is still read (validation reports it): the rules need the value.
  EXPECT_EQ(Parse(R"({"replicas":0})").replicas, 0);
  EXPECT_EQ(Parse(R"({"replicas":18446744073709551615})").replicas, std::numeric_limits<int64_t>::max());
}

TEST(Spec, DefaultsOfDesignMd) {
  const ModelServiceSpec d = Parse(R"({"model":"m"})").Defaulted();
  EXPECT_EQ(ToJsonValue(d), json::parse(R"({"model":"m","runtime":"Custom","replicas":1,"port":8080,"gpus":0,
            "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":0}},
            "rollout":{"timeoutSeconds":600,"rollback":"Manual"}})"));
  EXPECT_FALSE(d.version);
  EXPECT_FALSE(d.image);  // the controller's --default-image
  EXPECT_FALSE(d.autoscaling);
}

// spec.rollout (issue 15): read, defaulted, written back.
TEST(Spec, Rollout) {
  const ModelServiceSpec s = Parse(R"({"model":"m","rollout":{"timeoutSeconds":30,"rollback":"Automatic"}})");
  ASSERT_TRUE(s.rollout);
  EXPECT_EQ(s.rollout->timeout_seconds, 30);
  EXPECT_EQ(s.rollout->rollback, RollbackPolicy::kAutomatic);
  EXPECT_EQ(s.Defaulted().rollout, s.rollout);
  EXPECT_EQ(ToJsonValue(s)["rollout"], json::parse(R"({"timeoutSeconds":30,"rollback":"Automatic"})"));
  // Each default alone.
  EXPECT_EQ(ToJsonValue(Parse(R"({"rollout":{"rollback":"Automatic"}})").Defaulted())["rollout"],
            json::parse(R"({"timeoutSeconds":600,"rollback":"Automatic"})"));
  EXPECT_EQ(ToJsonValue(Parse(R"({"rollout":{"timeoutSeconds":90}})").Defaulted())["rollout"],
            json::parse(R"({"timeoutSeconds":90,"rollback":"Manual"})"));
  // What cannot be read is unset (and defaulted).
  auto bad = ParseModelService(json{{"spec", {{"rollout", {{"rollback", "Never"}}}}}});
  EXPECT_FALSE(bad.spec.rollout->rollback);
  EXPECT_EQ(bad.spec.Defaulted().rollout->rollback, RollbackPolicy::kManual);
  EXPECT_EQ(FieldRank("targetQueueLength") + 1, FieldRank("targetGPUUtilization"));
  EXPECT_EQ(FieldRank("targetGPUUtilization") + 1, FieldRank("rollout"));
  EXPECT_LT(FieldRank("timeoutSeconds"), FieldRank("rollback"));
}

TEST(Spec, DefaultsThatDependOnOtherFields) {
  // maxSurge 0: maxUnavailable 1, as the webhook (the controller once used 0 here).
  for (const char* surge : {"0", "\"0%\""}) {
    auto d = Parse((std::string(R"({"strategy":{"rollingUpdate":{"maxSurge":)") + surge + "}}}").c_str()).Defaulted();
    EXPECT_EQ(d.strategy->rolling_update->max_unavailable, (IntOrPercent{1, false})) << surge;
  }
  EXPECT_EQ(
      Parse(R"({"strategy":{"rollingUpdate":{"maxSurge":1}}})").Defaulted().strategy->rolling_update->max_unavailable,
      (IntOrPercent{0, false}));
  // Recreate: no rollingUpdate.
  EXPECT_FALSE(Parse(R"({"strategy":{"type":"Recreate"}})").Defaulted().strategy->rolling_update);
  // replicas follows autoscaling.minReplicas (defaulted to 1), when that is in range.
  EXPECT_EQ(Parse(R"({"autoscaling":{"minReplicas":3,"maxReplicas":9}})").Defaulted().replicas, 3);
  auto as = Parse(R"({"autoscaling":{"maxReplicas":9}})").Defaulted();
  EXPECT_EQ(as.autoscaling->min_replicas, 1);
  EXPECT_EQ(as.replicas, 1);
  EXPECT_EQ(Parse(R"({"autoscaling":{"minReplicas":0,"maxReplicas":9}})").Defaulted().replicas, 1);
  // A value given is never replaced.
  EXPECT_EQ(Parse(R"({"replicas":7,"autoscaling":{"minReplicas":3,"maxReplicas":9}})").Defaulted().replicas, 7);
}

TEST(Spec, DefaultedIsIdempotent) {
  for (const json& obj : test::ModelServiceCorpus(500)) {
    const ModelServiceSpec once = ParseModelService(obj).spec.Defaulted();
    EXPECT_EQ(once.Defaulted(), once) << obj.dump();
  }
}

TEST(Spec, FieldRankFollowsDesignMd) {
  EXPECT_LT(FieldRank("spec"), FieldRank("model"));
  EXPECT_LT(FieldRank("replicas"), FieldRank("port"));
  EXPECT_LT(FieldRank("gpus"), FieldRank("strategy"));
  EXPECT_LT(FieldRank("maxUnavailable"), FieldRank("autoscaling"));
  EXPECT_LT(FieldRank("autoscaling"), FieldRank("mode"));
  EXPECT_LT(FieldRank("mode"), FieldRank("minReplicas"));
  EXPECT_LT(FieldRank("targetQueueLength"), FieldRank("colour"));
}

}  // namespace
}  // namespace ms::api
