#include "shared/metrics/metrics.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <limits>
#include <sstream>
#include <string>

#include "test/support/test_support.h"

namespace ms::metrics {
namespace {

// The exposition is prometheus-cpp's TextSerializer (text format 0.0.4)
// with the help texts escaped first.
TEST(Metrics, CounterGaugeSerializeExactly) {
  prometheus::Registry r;
  auto& c = prometheus::BuildCounter().Name("requests_total").Help("Requests.").Register(r);
  c.Add({{"code", "200"}, {"webhook", "/validate"}}).Increment();
  c.Add({{"code", "200"}, {"webhook", "/validate"}}).Increment(2);
  c.Add({{"code", "200"}, {"webhook", "/validate"}}).Increment(-5);  // ignored
  auto& g = prometheus::BuildGauge().Name("depth").Help("Depth with \\ and\nnewline.").Register(r);
  g.Add({{"name", "a\"b\\c\nd"}}).Set(-1.5);
  EXPECT_EQ(Serialize(r),
            "# HELP requests_total Requests.\n"
            "# TYPE requests_total counter\n"
            "requests_total{code=\"200\",webhook=\"/validate\"} 3\n"
            "# HELP depth Depth with \\\\ and\\nnewline.\n"
            "# TYPE depth gauge\n"
            "depth{name=\"a\\\"b\\\\c\\nd\"} -1.5\n");
}

TEST(Metrics, HistogramCumulativeBuckets) {
  prometheus::Registry r;
  auto& h = prometheus::BuildHistogram()
                .Name("lat_seconds")
                .Help("Latency.")
                .Register(r)
                .Add({{"w", "v"}}, prometheus::Histogram::BucketBoundaries{0.1, 1});
  h.Observe(0.05);
  h.Observe(0.1);  // le is inclusive
  h.Observe(0.5);
  h.Observe(7);
  // prometheus-cpp writes _count and _sum before the buckets; the format
  // only asks that a histogram's lines stay together and the buckets come
  // in increasing le, ending with +Inf equal to _count.
  EXPECT_EQ(Serialize(r),
            "# HELP lat_seconds Latency.\n"
            "# TYPE lat_seconds histogram\n"
            "lat_seconds_count{w=\"v\"} 4\n"
            "lat_seconds_sum{w=\"v\"} 7.65\n"
            "lat_seconds_bucket{w=\"v\",le=\"0.1\"} 2\n"
            "lat_seconds_bucket{w=\"v\",le=\"1\"} 3\n"
            "lat_seconds_bucket{w=\"v\",le=\"+Inf\"} 4\n");
}

// A program's one registry: /metrics gives the process_* metrics, then the
// families its subsystems declared on it.
TEST(Metrics, AProgramsRegistryServesTheProcessMetricsThenItsFamilies) {
  Registry registry;
  prometheus::BuildGauge().Name("ready").Help("r").Register(registry.families()).Add({}).Set(1);
  const std::string text = Serialize(registry);
  EXPECT_EQ(text.rfind("# HELP process_", 0), 0u) << text;
  EXPECT_NE(text.find("\n# HELP ready r\n# TYPE ready gauge\nready 1\n"), std::string::npos) << text;
}

TEST(Metrics, CollectablesAreSerializedInTheOrderGiven) {
  prometheus::Registry a, b;
  prometheus::BuildGauge().Name("b_gauge").Help("b").Register(b).Add({}).Set(2);
  prometheus::BuildGauge().Name("a_gauge").Help("a").Register(a).Add({}).Set(1);
  const prometheus::Collectable* both[] = {&b, &a};
  EXPECT_EQ(Serialize(both),
            "# HELP b_gauge b\n# TYPE b_gauge gauge\nb_gauge 2\n"
            "# HELP a_gauge a\n# TYPE a_gauge gauge\na_gauge 1\n");
}

TEST(Metrics, ExponentialBucketsAsClientGolang) {
  EXPECT_EQ(ExponentialBuckets(0.5, 2, 4), (prometheus::Histogram::BucketBoundaries{0.5, 1, 2, 4}));
  EXPECT_TRUE(ExponentialBuckets(1, 2, 0).empty());
}

TEST(Metrics, ObjectGaugesSetPutRemoveByObject) {
  Registry r;
  auto& g = r.AddObjectGauges("conditions", "c", {"type", "reason"});
  g.Set("ns", "b", {{{"Ready", "Available"}, 1}, {{"Degraded", "AsExpected"}, 0}});
  g.Set("ns", "a", {{{"Ready", "Creating"}, 1}});
  g.Put("ns", "a", {{"Ready", "Creating"}, 2});   // same labels: the value changes
  g.Put("ns", "a", {{"Degraded", "Failed"}, 3});  // new labels: added beside
  const std::string head = "# HELP conditions c\n# TYPE conditions gauge\n";
  const std::string b =
      "conditions{name=\"b\",namespace=\"ns\",reason=\"Available\",type=\"Ready\"} 1\n"
      "conditions{name=\"b\",namespace=\"ns\",reason=\"AsExpected\",type=\"Degraded\"} 0\n";
  EXPECT_EQ(Serialize(*r.Collectables().back()),
            head +
                "conditions{name=\"a\",namespace=\"ns\",reason=\"Creating\",type=\"Ready\"} 2\n"
                "conditions{name=\"a\",namespace=\"ns\",reason=\"Failed\",type=\"Degraded\"} 3\n" +
                b);
  // Ready, Available, AsExpected, Creating, Degraded, Failed: each held once.
  EXPECT_EQ(g.LabelValues(), 6u);
  g.Set("ns", "a", {{{"Ready", "Available"}, 1}});  // replaces both of a's series
  g.Set("ns", "b", {{{"Ready", "Available"}, 1}});  // drops b's Degraded
  EXPECT_EQ(Serialize(*r.Collectables().back()),
            head + "conditions{name=\"a\",namespace=\"ns\",reason=\"Available\",type=\"Ready\"} 1\n" +
                "conditions{name=\"b\",namespace=\"ns\",reason=\"Available\",type=\"Ready\"} 1\n");
  EXPECT_EQ(g.LabelValues(), 2u) << "values no series holds any more are dropped";
  g.Remove("ns", "a");
  g.Set("ns", "b", {});  // no series: the object is forgotten
  g.Remove("ns", "never-added");
  EXPECT_EQ(g.Objects(), 0u);
  EXPECT_EQ(g.LabelValues(), 0u);
  EXPECT_EQ(Serialize(*r.Collectables().back()), "");  // no series, no HELP line (as a prometheus::Family)
}

TEST(Metrics, ObjectGaugesRejectWrongLabelCountAndTwiceRegisteredName) {
  Registry r;
  auto& g = r.AddObjectGauges("replicas", "r", {"kind"});
  EXPECT_THROW(g.Set("ns", "a", {{{}, 1}}), std::invalid_argument);
  EXPECT_THROW(g.Put("ns", "a", {{"desired", "extra"}, 1}), std::invalid_argument);
  EXPECT_EQ(g.Objects(), 0u);
  EXPECT_THROW(r.AddObjectGauges("replicas", "again"), std::invalid_argument);
}

TEST(Metrics, ObjectGaugesSerializedInPartsReadAsOneFamily) {
  Registry r;
  auto& g = r.AddObjectGauges("per_object", "line one\nline two", {"kind"});
  for (int i = 0; i < 1300; ++i) {  // three parts of at most 512 series
    g.Put("ns", "o" + std::to_string(i), {{"desired"}, static_cast<double>(i)});
    g.Put("ns", "o" + std::to_string(i), {{"ready"}, 0.5});
  }
  auto whole = g.Collect();
  ASSERT_EQ(whole.size(), 1u);
  whole[0].help = "line one\\nline two";  // Serialize escapes help texts
  std::ostringstream expected;
  prometheus::TextSerializer().Serialize(expected, whole);
  const std::string text = Serialize(g);
  EXPECT_EQ(text, expected.str());
  EXPECT_EQ(text.find("# HELP", 1), std::string::npos);
  EXPECT_NE(text.find("per_object{kind=\"ready\",name=\"o999\",namespace=\"ns\"} 0.5\n"), std::string::npos);
}

TEST(Metrics, ObjectGaugesServedAfterTheFamilies) {
  Registry r;
  r.AddObjectGauges("per_object", "p").Put("ns", "a", {{}, 7});
  prometheus::BuildGauge().Name("plain").Help("q").Register(r.families()).Add({}).Set(1);
  const std::string text = Serialize(r);
  const auto plain = text.find("plain 1\n");
  const auto object = text.find("per_object{name=\"a\",namespace=\"ns\"} 7\n");
  ASSERT_NE(plain, std::string::npos);
  ASSERT_NE(object, std::string::npos);
  EXPECT_LT(plain, object);
}

TEST(Metrics, ProcessMetricsSampled) {
  ProcessCollector process;
  auto text = Serialize(process);
  for (const char* family :
       {"process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
        "process_start_time_seconds", "process_open_fds", "process_max_fds"})
    EXPECT_NE(text.find(std::string("\n") + family + " "), std::string::npos) << family << " missing:\n" << text;
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("process_resident_memory_bytes 0\n"), std::string::npos);
  EXPECT_EQ(text.find("process_start_time_seconds 0\n"), std::string::npos);
  EXPECT_EQ(text.find("process_open_fds 0\n"), std::string::npos);
}

// A registry shaped like the programs' own, with awkward label values.
std::string SampleExposition() {
  ProcessCollector process;
  prometheus::Registry r;
  auto& req =
      prometheus::BuildCounter().Name("controller_runtime_webhook_requests_total").Help("Total requests.").Register(r);
  req.Add({{"webhook", "/validate"}, {"code", "200"}}).Increment(12);
  req.Add({{"webhook", "/mutate"}, {"code", "413"}}).Increment();
  auto& lat =
      prometheus::BuildHistogram().Name("controller_runtime_webhook_latency_seconds").Help("Latency.").Register(r);
  lat.Add({{"webhook", "/validate"}},
          prometheus::Histogram::BucketBoundaries{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10})
      .Observe(0.003);
  lat.Add({{"webhook", "/mutate"}}, ExponentialBuckets(0.0001, 2, 10)).Observe(0.3);
  prometheus::BuildGauge()
      .Name("modelservice_replicas")
      .Help("Replicas \"quoted\" \\ help.")
      .Register(r)
      .Add({{"namespace", "ns"}, {"name", "we\"ird\\na\nme"}, {"kind", "desired"}})
      .Set(3);
  prometheus::BuildGauge()
      .Name("nan_value")
      .Help("NaN.")
      .Register(r)
      .Add({})
      .Set(std::numeric_limits<double>::quiet_NaN());
  const prometheus::Collectable* all[] = {&process, &r};
  return Serialize(all);
}

TEST(Metrics, PromtoolAcceptsTheExposition) {
  std::string promtool = MS_PROMTOOL;
  if (promtool.empty() || promtool.find("NOTFOUND") != std::string::npos)
    FAIL() << "promtool not found: configure with -DPROMTOOL=... (scripts/test.sh does)";
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
