#include "base/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>

#include "test/support/test_support.h"

namespace ms::metrics {
namespace {

TEST(Metrics, CounterGaugeSerializeExactly) {
  Registry r;
  auto& c = BuildCounter().Name("requests_total").Help("Requests.").Register(r);
  c.Add({{"code", "200"}, {"webhook", "/validate"}}).Increment();
  c.Add({{"code", "200"}, {"webhook", "/validate"}}).Increment(2);
  c.Add({{"code", "200"}, {"webhook", "/validate"}}).Increment(-5);  // ignored
  auto& g = BuildGauge().Name("depth").Help("Depth with \\ and\nnewline.").Register(r);
  g.Add({{"name", "a\"b\\c\nd"}}).Set(-1.5);
  EXPECT_EQ(r.Serialize(),
            "# HELP requests_total Requests.\n"
            "# TYPE requests_total counter\n"
            "requests_total{code=\"200\",webhook=\"/validate\"} 3\n"
            "# HELP depth Depth with \\\\ and\\nnewline.\n"
            "# TYPE depth gauge\n"
            "depth{name=\"a\\\"b\\\\c\\nd\"} -1.5\n");
}

TEST(Metrics, SameLabelsSameMetric) {
  Registry r;
  auto& f = BuildCounter().Name("x_total").Help("x").Register(r);
  auto& a = f.Add({{"k", "v"}});
  auto& b = f.Add({{"k", "v"}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &f.Add({{"k", "w"}}));
}

TEST(Metrics, HistogramCumulativeBuckets) {
  Registry r;
  auto& h =
      BuildHistogram().Name("lat_seconds").Help("Latency.").Register(r).Add({{"w", "v"}}, BucketBoundaries{0.1, 1});
  h.Observe(0.05);
  h.Observe(0.1);  // le is inclusive
  h.Observe(0.5);
  h.Observe(7);
  EXPECT_EQ(r.Serialize(),
            "# HELP lat_seconds Latency.\n"
            "# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{w=\"v\",le=\"0.1\"} 2\n"
            "lat_seconds_bucket{w=\"v\",le=\"1\"} 3\n"
            "lat_seconds_bucket{w=\"v\",le=\"+Inf\"} 4\n"
            "lat_seconds_sum{w=\"v\"} 7.65\n"
            "lat_seconds_count{w=\"v\"} 4\n");
}

TEST(Metrics, SpecialValues) {
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(1e21), "1e+21");
}

TEST(Metrics, RejectsBadNamesAndDuplicates) {
  Registry r;
  EXPECT_THROW(BuildCounter().Name("1bad").Help("x").Register(r), std::invalid_argument);
  EXPECT_THROW(BuildCounter().Name("ok").Help("x").Labels({{"__x", "y"}}).Register(r), std::invalid_argument);
  BuildCounter().Name("dup").Help("x").Register(r);
  EXPECT_THROW(BuildGauge().Name("dup").Help("x").Register(r), std::invalid_argument);
  EXPECT_THROW(Histogram(BucketBoundaries{1, 1}), std::invalid_argument);
}

TEST(Metrics, ConcurrentIncrementsAreNotLost) {
  Registry r;
  auto& c = BuildCounter().Name("c_total").Help("c").Register(r).Add({});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) c.Increment();
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.Value(), 40000);
}

TEST(Metrics, ProcessMetricsSampled) {
  Registry r;
  RegisterProcessMetrics(r);
  auto text = r.Serialize();
  EXPECT_NE(text.find("process_resident_memory_bytes "), std::string::npos);
  EXPECT_EQ(text.find("process_resident_memory_bytes 0\n"), std::string::npos);
  EXPECT_EQ(text.find("process_start_time_seconds 0\n"), std::string::npos);
  EXPECT_EQ(text.find("process_open_fds 0\n"), std::string::npos);
}

// A registry shaped like the programs' own, with awkward label values.
std::string SampleExposition() {
  Registry r;
  RegisterProcessMetrics(r);
  auto& req = BuildCounter().Name("controller_runtime_webhook_requests_total").Help("Total requests.").Register(r);
  req.Add({{"webhook", "/validate"}, {"code", "200"}}).Increment(12);
  req.Add({{"webhook", "/mutate"}, {"code", "413"}}).Increment();
  auto& lat = BuildHistogram().Name("controller_runtime_webhook_latency_seconds").Help("Latency.").Register(r);
  lat.Add({{"webhook", "/validate"}}, DefaultBuckets()).Observe(0.003);
  lat.Add({{"webhook", "/mutate"}}, ExponentialBuckets(0.0001, 2, 10)).Observe(0.3);
  BuildGauge()
      .Name("modelservice_replicas")
      .Help("Replicas \"quoted\" \\ help.")
      .Register(r)
      .Add({{"namespace", "ns"}, {"name", "we\"ird\\na\nme"}, {"kind", "desired"}})
      .Set(3);
  BuildGauge().Name("nan_value").Help("NaN.").Register(r).Add({}).Set(std::numeric_limits<double>::quiet_NaN());
  return r.Serialize();
}

TEST(Metrics, PromtoolAcceptsTheExposition) {
  std::string promtool = MS_PROMTOOL;
  if (promtool.empty() || promtool.find("NOTFOUND") != std::string::npos)
    FAIL() << "promtool not found: run scripts/setup.sh (Debian package prometheus)";
  auto res = test::Run(promtool + " check metrics", SampleExposition());
  EXPECT_EQ(res.exit_code, 0) << res.output;
}

TEST(Metrics, PythonPrometheusClientParsesTheSameValues) {
  std::string py = MS_PYTHON3;
  if (py.empty() || py.find("NOTFOUND") != std::string::npos) FAIL() << "/usr/bin/python3 not found";
  test::TempDir dir;
  test::WriteFile(dir.File("metrics.txt"), SampleExposition());
  test::WriteFile(dir.File("parse.py"), R"PY(
import sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
out = []
for fam in text_string_to_metric_families(text):
    for s in fam.samples:
        if s.name.startswith("process_"):
            continue
        labels = ",".join("%s=%s" % (k, v) for k, v in sorted(s.labels.items()))
        out.append("%s|%s|%s|%r" % (fam.type, s.name, labels, s.value))
print("\n".join(sorted(out)))
)PY");
  auto res = test::Run(py + " " + dir.File("parse.py") + " " + dir.File("metrics.txt"));
  ASSERT_EQ(res.exit_code, 0) << res.output;
  const auto& o = res.output;
  EXPECT_NE(o.find("counter|controller_runtime_webhook_requests_total|code=200,webhook=/validate|12.0"),
            std::string::npos)
      << o;
  EXPECT_NE(o.find("histogram|controller_runtime_webhook_latency_seconds_bucket|le=0.005,webhook=/validate|1.0"),
            std::string::npos)
      << o;
  EXPECT_NE(o.find("histogram|controller_runtime_webhook_latency_seconds_count|webhook=/mutate|1.0"), std::string::npos)
      << o;
  // The escaped label value round-trips exactly.
  EXPECT_NE(o.find("gauge|modelservice_replicas|kind=desired,name=we\"ird\\na\nme,namespace=ns|3.0"), std::string::npos)
      << o;
  EXPECT_NE(o.find("gauge|nan_value||nan"), std::string::npos) << o;
}

}  // namespace
}  // namespace ms::metrics
