// check-admission's verdicts on the API server's answers: both webhooks
// answered, the mutating one did not (the object admitted as sent), the
// validating one did not (the invalid object admitted), another refusal.
#include "controller/check_admission.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "test/support/verb_client.h"

namespace ms::controller {
namespace {

// Answers creates as an API server with the webhooks on or off would.
class FakeApiServer : public test::VerbClient {
 public:
  bool mutating = true;
  bool validating = true;
  std::string refusal =
      "admission webhook \"validate.modelservices.modelops.dev\" denied the request: "
      "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when maxSurge is 0";
  std::vector<std::string> paths;

 protected:
  kube::Result OnCreate(const std::string& path, const nlohmann::json& body, kube::Deadline) override {
    paths.push_back(path);
    nlohmann::json obj = body;
    const bool invalid = obj["spec"].contains("strategy");
    if (invalid && validating) return {422, nlohmann::json(), kube::Status{422, "Invalid", refusal}};
    if (mutating) {
      obj["spec"]["replicas"] = 1;
      obj["spec"]["port"] = 8080;
    }
    return {201, obj, std::nullopt};
  }
};

TEST(CheckAdmission, BothWebhooksAnswer) {
  FakeApiServer api;
  std::ostringstream out;
  EXPECT_EQ(CheckAdmission(api, "ops", out), 0) << out.str();
  EXPECT_NE(out.str().find("ok: the mutating webhook defaulted a ModelService (spec.replicas 1, spec.port 8080)"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("ok: the validating webhook denied"), std::string::npos) << out.str();
  ASSERT_EQ(api.paths.size(), 2U);
  for (const auto& p : api.paths) EXPECT_EQ(p, "/apis/modelops.dev/v1/namespaces/ops/modelservices?dryRun=All");
}

TEST(CheckAdmission, NoMutatingWebhook) {
  FakeApiServer api;
  api.mutating = false;
  std::ostringstream out;
  EXPECT_EQ(CheckAdmission(api, "ops", out), 1);
  EXPECT_NE(out.str().find("FAIL: a valid ModelService was admitted without the mutating webhook's defaults"),
            std::string::npos)
      << out.str();
}

TEST(CheckAdmission, NoValidatingWebhook) {
  FakeApiServer api;
  api.validating = false;
  std::ostringstream out;
  EXPECT_EQ(CheckAdmission(api, "ops", out), 1);
  EXPECT_NE(out.str().find("FAIL: an invalid ModelService (maxSurge 0 and maxUnavailable 0) was admitted"),
            std::string::npos)
      << out.str();
}

TEST(CheckAdmission, RefusedBySomethingElse) {
  FakeApiServer api;
  api.refusal = "modelservices.modelops.dev is forbidden: User cannot create resource";
  std::ostringstream out;
  EXPECT_EQ(CheckAdmission(api, "ops", out), 1);
  EXPECT_NE(out.str().find("but not by validate.modelservices.modelops.dev"), std::string::npos) << out.str();
}

TEST(CheckAdmissionMain, Usage) {
  std::ostringstream out, err;
  EXPECT_EQ(CheckAdmissionMain({}, out, err), 2);
  EXPECT_NE(err.str().find("--namespace is required"), std::string::npos);
  EXPECT_EQ(CheckAdmissionMain({"--bogus"}, out, err), 2);
}

}  // namespace
}  // namespace ms::controller
