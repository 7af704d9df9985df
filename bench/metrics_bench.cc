// The metrics' own cost, without the network:
//
//   RequestUpdate          what the webhook records per admission request
//                          (webhook/server.cc Serve + Record): in-flight gauge
//                          up and down, one latency histogram observation
//                          (16 exponential buckets), the request and the
//                          decision counters; series resolved once, as the
//                          server does (webhook/metrics.h RouteMetrics).
//                          ->Threads(2): both event loops updating the same
//                          series.
//   Serialize/Webhook      one /metrics answer of the webhook: the process_*
//                          collector and the server's pre-created series
//                          (2 routes).
//   Serialize/Controller   one /metrics answer of a controller managing 200
//                          ModelServices (400 modelservice_replicas series,
//                          workqueue, reconcile, leader election, rest_client).
//   ConditionChange/N      one ModelService's condition changing reason
//                          (executor.cc RecordMetrics: ObjectGauges::Set
//                          replaces the object's series) among N
//                          ModelServices with three conditions each: the
//                          time per change must not grow with N
//                          (bench/README.md, "Metrics").
//   SeriesMemory/N         the heap the three per-object families
//                          (modelservice_replicas, _status_condition, _info)
//                          hold per ModelService, filled as executor.cc
//                          RecordMetrics fills them for a converged object
//                          with no ready pod (the benchmark's cluster):
//                          counter bytes_per_object (glibc's mallinfo2).
//   ScrapeObjects/N/Gzip   one /metrics answer of a controller with N such
//                          ModelServices, plain (Gzip 0) or gzip-coded as
//                          Prometheus asks (1; shared/transport/gzip.h):
//                          the time and the answer's bytes per ModelService
//                          (the answer is held whole until it is sent).
//
// The families are the programs' own declarations (each subsystem's
// metrics.h), not copies.
//
// `RecordRequest` is not inlined so that callgrind can count its
// instructions (bench/README.md, "Metrics").
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "controller/kube/metrics.h"
#include "controller/modelservice/metrics.h"
#include "controller/runtime/metrics.h"
#include "shared/metrics/metrics.h"
#include "shared/transport/gzip.h"
#include "webhook/metrics.h"

namespace {

namespace metrics = ms::metrics;

// The series one /validate request updates, resolved once as the server does.
struct RequestSeries {
  explicit RequestSeries(metrics::Registry& registry)
      : webhook(registry), validate(webhook, "/validate"), mutate(webhook, "/mutate") {}
  ms::webhook::WebhookMetrics webhook;
  ms::webhook::RouteMetrics validate, mutate;
};

[[gnu::noinline]] void RecordRequest(ms::webhook::RouteMetrics& m, double seconds) {
  m.in_flight.Increment();
  m.latency.Observe(seconds);
  m.in_flight.Decrement();
  m.Requests(200).Increment();
  m.Decisions("CREATE", "allowed").Increment();
}

// Latencies the webhook sees (50 us .. 3 ms), spread over several buckets.
constexpr double kLatencies[] = {0.00008, 0.00012, 0.00021, 0.00035, 0.0009, 0.003, 0.00015, 0.00045};

void RequestUpdate(benchmark::State& state) {
  static metrics::Registry registry;  // shared by the threads of one run
  static RequestSeries series(registry);
  size_t i = static_cast<size_t>(state.thread_index());
  for (auto _ : state) RecordRequest(series.validate, kLatencies[i++ % std::size(kLatencies)]);
}
BENCHMARK(RequestUpdate);
BENCHMARK(RequestUpdate)->Threads(2)->UseRealTime();

[[gnu::noinline]] std::string Scrape(const metrics::Registry& registry) { return metrics::Serialize(registry); }

// What the program registered, kept alive while it is serialized.
struct Program {
  metrics::Registry registry;
  std::shared_ptr<void> parts;
};

// The webhook's registry after a few requests.
void FillWebhook(Program& p) {
  auto series = std::make_shared<RequestSeries>(p.registry);
  for (double l : kLatencies) RecordRequest(series->validate, l);
  p.parts = series;
}

// A controller managing 200 ModelServices.
void FillController(Program& p) {
  struct Parts {
    explicit Parts(metrics::Registry& r) : client(r), runtime(r), modelservice(r) {}
    ms::kube::ClientMetrics client;
    ms::runtime::RuntimeMetrics runtime;
    ms::modelservice::ModelServiceMetrics modelservice;
  };
  auto parts = std::make_shared<Parts>(p.registry);
  const prometheus::Labels queue{{"name", "modelservice"}};
  const auto buckets = ms::runtime::WorkQueueMetrics::Buckets();
  parts->runtime.workqueue.depth.Add(queue);
  parts->runtime.workqueue.adds.Add(queue).Increment(1000);
  parts->runtime.workqueue.queue_duration.Add(queue, buckets).Observe(0.001);
  parts->runtime.workqueue.work_duration.Add(queue, buckets).Observe(0.002);
  for (const char* r : ms::runtime::ReconcileMetrics::kResults)
    parts->runtime.reconcile.total.Add({{"controller", "modelservice"}, {"result", r}}).Increment(10);
  parts->runtime.reconcile.time.Add({{"controller", "modelservice"}}, ms::runtime::ReconcileMetrics::Buckets())
      .Observe(0.02);
  for (const char* method : {"GET", "POST", "PUT", "PATCH", "DELETE"})
    for (const char* code : {"200", "201", "404", "409"})
      parts->client.requests.Add({{"code", code}, {"method", method}, {"host", "10.0.0.1:443"}}).Increment(7);
  for (int i = 0; i < 200; ++i)
    for (const char* kind : {"desired", "ready"})
      parts->modelservice.replicas.Put("team-" + std::to_string(i % 10), "ms-" + std::to_string(i), {{kind}, 3});
  p.parts = parts;
}

void SerializeOne(benchmark::State& state, void (*fill)(Program&)) {
  Program p;
  fill(p);
  size_t bytes = 0;
  for (auto _ : state) {
    auto text = Scrape(p.registry);
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}

BENCHMARK_CAPTURE(SerializeOne, Webhook, FillWebhook)->Name("Serialize/Webhook")->Unit(benchmark::kMicrosecond);

BENCHMARK_CAPTURE(SerializeOne, Controller, FillController)
    ->Name("Serialize/Controller")
    ->Unit(benchmark::kMicrosecond);

// N ModelServices with three conditions each; every iteration changes one
// condition's reason of the next object (one series out, one in).
void ConditionChange(benchmark::State& state) {
  metrics::Registry registry;
  ms::modelservice::ModelServiceMetrics m(registry);
  const int n = static_cast<int>(state.range(0));
  auto conditions = [](const char* reason) {
    std::vector<metrics::ObjectGauges::Series> out;
    for (const char* type : {"Ready", "Progressing", "Degraded"}) out.push_back({{type, "False", reason}, 1});
    return out;
  };
  for (int i = 0; i < n; ++i) m.conditions.Set("bench", "ms-" + std::to_string(i), conditions("Creating"));
  int i = 0;
  bool flip = false;
  for (auto _ : state) {
    auto next = conditions("Creating");
    if (!flip) next[0].labels[2] = "Changed";  // Ready's reason: Creating -> Changed, next pass back
    m.conditions.Set("bench", "ms-" + std::to_string(i), std::move(next));
    if (++i == n) i = 0, flip = !flip;
  }
}
BENCHMARK(ConditionChange)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

// The series of N converged ModelServices as the executor records them:
// replicas desired 1 and ready 0, the three conditions, the serving version.
void FillObjects(ms::modelservice::ModelServiceMetrics& m, int n) {
  for (int i = 0; i < n; ++i) {
    const std::string name = "ms-" + std::to_string(i);
    m.replicas.Put("bench", name, {{"desired"}, 1});
    m.replicas.Put("bench", name, {{"ready"}, 0});
    m.conditions.Set("bench", name,
                     {{{"Ready", "False", "ReplicasNotReady"}, 1},
                      {{"Progressing", "True", "Creating"}, 1},
                      {{"Degraded", "False", "AsExpected"}, 1}});
    m.info.Set("bench", name, {{{"5d8c7b9f64"}, 1}});
  }
}

void SeriesMemory(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  double per_object = 0;
  for (auto _ : state) {
    metrics::Registry registry;
    auto m = std::make_unique<ms::modelservice::ModelServiceMetrics>(registry);
    const size_t before = mallinfo2().uordblks;
    FillObjects(*m, n);
    per_object = static_cast<double>(mallinfo2().uordblks - before) / n;
    benchmark::DoNotOptimize(m);
  }
  state.counters["bytes_per_object"] = per_object;
}
BENCHMARK(SeriesMemory)->Arg(10000)->Iterations(1)->Unit(benchmark::kMillisecond);

void ScrapeObjects(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const bool gzip = state.range(1) != 0;
  metrics::Registry registry;
  ms::modelservice::ModelServiceMetrics m(registry);
  FillObjects(m, n);
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string answer =
        gzip ? ms::transport::Gzipped([&](std::ostream& out) { metrics::Serialize(registry.Collectables(), out); })
             : metrics::Serialize(registry.Collectables());
    bytes = answer.size();
    benchmark::DoNotOptimize(answer);
  }
  state.counters["bytes_per_object"] = static_cast<double>(bytes) / n;
  // Seconds of CPU per ModelService (printed with an SI prefix: 20u is 20 us).
  state.counters["cpu_per_object"] = benchmark::Counter(
      static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(ScrapeObjects)->ArgsProduct({{1000, 10000}, {0, 1}})->ArgNames({"N", "Gzip"})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
