// --per-object-metrics=false: after a reconcile (which, with the switch on,
// exports series naming the ModelService), /metrics names no ModelService.
#include <gtest/gtest.h>

#include <string>

#include "controller/modelservice/executor.h"
#include "controller/modelservice/metrics.h"
#include "shared/metrics/metrics.h"
#include "test/controller/modelservice/fakes.h"
#include "test/support/fake_clock.h"
#include "test/support/objects.h"

namespace ms::modelservice {
namespace {

class NoAutoscaler final : public autoscale::Autoscaler {
 public:
  autoscale::Recommendation Recommend(const std::string&, const std::string&, const autoscale::Spec&, int) override {
    return {};
  }
  void Forget(const std::string&, const std::string&) override {}
  autoscale::GpuUtilization Gpu(const std::string&, const std::string&) override { return {}; }
  void ForgetGpu(const std::string&, const std::string&) override {}
};

// /metrics after one reconcile of ml/bert, with the switch as given.
std::string MetricsAfterAReconcile(bool per_object) {
  FakeClock clock;
  fakes::FakeApi api;
  fakes::FakeRecorder recorder;
  NoAutoscaler autoscaler;
  Expectations expectations{clock};
  metrics::Registry registry;
  ModelServiceMetrics metrics{registry, per_object};
  Executor exec{api, recorder, autoscaler, expectations, clock, ExecutorOptions{}, metrics};
  api.Put("/apis/modelops.dev/v1/namespaces/ml/modelservices/bert", test::ModelService().Defaulted());
  exec.Reconcile(runtime::Request{"ml", "bert"});
  return metrics::Serialize(registry);
}

TEST(PerObjectMetrics, OnTheSeriesNameTheModelService) {
  const std::string text = MetricsAfterAReconcile(true);
  EXPECT_NE(text.find("modelservice_replicas{kind=\"desired\",name=\"bert\",namespace=\"ml\"}"), std::string::npos)
      << text;
  EXPECT_NE(text.find("modelservice_info{name=\"bert\",namespace=\"ml\""), std::string::npos) << text;
}

TEST(PerObjectMetrics, OffNoSeriesNamesAModelService) {
  const std::string text = MetricsAfterAReconcile(false);
  EXPECT_EQ(text.find("name=\"bert\""), std::string::npos) << text;
  EXPECT_EQ(text.find("namespace=\"ml\""), std::string::npos) << text;
  // Not even the families' HELP and TYPE lines: they are not registered.
  EXPECT_EQ(text.find("modelservice_replicas"), std::string::npos) << text;
  EXPECT_EQ(text.find("modelservice_status_condition"), std::string::npos) << text;
  EXPECT_EQ(text.find("modelservice_info"), std::string::npos) << text;
}

}  // namespace
}  // namespace ms::modelservice
