// The metrics' own cost, without the network:
//
//   RequestUpdate          what the webhook records per admission request
//                          (webhook/server.cc Serve + Record): in-flight gauge
//                          up and down, one latency histogram observation
//                          (16 exponential buckets), the request and the
//                          decision counters; metric pointers resolved once,
//                          as the server does. ->Threads(2): both event loops
//                          updating the same series.
//   Serialize/Webhook      one /metrics answer of the webhook: the process_*
//                          collector and the server's pre-created series
//                          (2 routes).
//   Serialize/Controller   one /metrics answer of a controller managing 200
//                          ModelServices (400 modelservice_replicas series,
//                          workqueue, reconcile, rest_client).
//
// `RecordRequest` is not inlined so that callgrind can count its
// instructions (bench/README.md, "Metrics").
#include <benchmark/benchmark.h>

#include <string>

#include "base/metrics.h"

namespace {

namespace metrics = ms::metrics;

struct RequestSeries {
  prometheus::Gauge* in_flight;
  prometheus::Histogram* latency;
  prometheus::Counter* requests;
  prometheus::Counter* decisions;
};

// The webhook server's families and pre-created series (webhook/server.cc).
RequestSeries AddWebhookSeries(prometheus::Registry& registry) {
  auto& requests = prometheus::BuildCounter()
                       .Name("controller_runtime_webhook_requests_total")
                       .Help("Total number of admission requests by HTTP status code.")
                       .Register(registry);
  auto& latency = prometheus::BuildHistogram()
                      .Name("controller_runtime_webhook_latency_seconds")
                      .Help("Histogram of the latency of processing admission requests")
                      .Register(registry);
  auto& in_flight = prometheus::BuildGauge()
                        .Name("controller_runtime_webhook_requests_in_flight")
                        .Help("Current number of admission requests being served.")
                        .Register(registry);
  auto& decisions = prometheus::BuildCounter()
                        .Name("modelservice_admission_decisions_total")
                        .Help("Admission decisions by webhook, operation and decision (allowed, denied, rejected).")
                        .Register(registry);
  RequestSeries first{};
  for (const char* path : {"/validate", "/mutate"}) {
    RequestSeries s{};
    s.in_flight = &in_flight.Add({{"webhook", path}});
    s.latency = &latency.Add({{"webhook", path}}, metrics::ExponentialBuckets(0.00005, 2, 16));
    for (int code : {200, 400, 408, 411, 413, 415}) {
      auto& c = requests.Add({{"webhook", path}, {"code", std::to_string(code)}});
      if (code == 200) s.requests = &c;
    }
    for (const char* op : {"CREATE", "UPDATE", "DELETE", "CONNECT"})
      for (const char* decision : {"allowed", "denied"}) {
        auto& c = decisions.Add({{"webhook", path}, {"operation", op}, {"decision", decision}});
        if (std::string(op) == "CREATE" && std::string(decision) == "allowed") s.decisions = &c;
      }
    decisions.Add({{"webhook", path}, {"operation", "UNKNOWN"}, {"decision", "rejected"}});
    if (first.in_flight == nullptr) first = s;
  }
  return first;
}

[[gnu::noinline]] void RecordRequest(const RequestSeries& s, double seconds) {
  s.in_flight->Increment();
  s.latency->Observe(seconds);
  s.in_flight->Decrement();
  s.requests->Increment();
  s.decisions->Increment();
}

// Latencies the webhook sees (50 us .. 3 ms), spread over several buckets.
constexpr double kLatencies[] = {0.00008, 0.00012, 0.00021, 0.00035, 0.0009, 0.003, 0.00015, 0.00045};

void RequestUpdate(benchmark::State& state) {
  static prometheus::Registry registry;  // shared by the threads of one run
  static const RequestSeries series = AddWebhookSeries(registry);
  size_t i = static_cast<size_t>(state.thread_index());
  for (auto _ : state) RecordRequest(series, kLatencies[i++ % std::size(kLatencies)]);
}
BENCHMARK(RequestUpdate);
BENCHMARK(RequestUpdate)->Threads(2)->UseRealTime();

// What a program's /metrics serves: the process collector, then its registry.
struct Exposition {
  metrics::ProcessCollector process;
  prometheus::Registry registry;
};

[[gnu::noinline]] std::string Scrape(const Exposition& e) {
  const prometheus::Collectable* collectables[] = {&e.process, &e.registry};
  return metrics::Serialize(collectables);
}

// The webhook's registry after a few requests.
void FillWebhook(prometheus::Registry& registry) {
  const RequestSeries s = AddWebhookSeries(registry);
  for (double l : kLatencies) RecordRequest(s, l);
}

void SerializeOne(benchmark::State& state, void (*fill)(prometheus::Registry&)) {
  Exposition e;
  fill(e.registry);
  size_t bytes = 0;
  for (auto _ : state) {
    auto text = Scrape(e);
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}

// A controller managing 200 ModelServices.
void FillController(prometheus::Registry& registry) {
  const prometheus::Labels queue{{"name", "modelservice"}};
  const auto queue_buckets = metrics::ExponentialBuckets(1e-8, 10, 12);
  prometheus::BuildGauge().Name("workqueue_depth").Help("Current depth of workqueue").Register(registry).Add(queue);
  prometheus::BuildCounter()
      .Name("workqueue_adds_total")
      .Help("Total number of adds handled by workqueue")
      .Register(registry)
      .Add(queue)
      .Increment(1000);
  prometheus::BuildHistogram()
      .Name("workqueue_queue_duration_seconds")
      .Help("How long in seconds an item stays in workqueue before being requested")
      .Register(registry)
      .Add(queue, queue_buckets)
      .Observe(0.001);
  prometheus::BuildHistogram()
      .Name("workqueue_work_duration_seconds")
      .Help("How long in seconds processing an item from workqueue takes")
      .Register(registry)
      .Add(queue, queue_buckets)
      .Observe(0.002);
  auto& total = prometheus::BuildCounter()
                    .Name("controller_runtime_reconcile_total")
                    .Help("Total number of reconciliations per controller")
                    .Register(registry);
  for (const char* r : {"success", "error", "requeue", "requeue_after"})
    total.Add({{"controller", "modelservice"}, {"result", r}}).Increment(10);
  prometheus::BuildHistogram()
      .Name("controller_runtime_reconcile_time_seconds")
      .Help("Length of time per reconciliation per controller")
      .Register(registry)
      .Add({{"controller", "modelservice"}}, metrics::ExponentialBuckets(0.005, 1.25, 40))
      .Observe(0.02);
  auto& rest = prometheus::BuildCounter()
                   .Name("rest_client_requests_total")
                   .Help("Number of HTTP requests, partitioned by status code, method, and host.")
                   .Register(registry);
  for (const char* method : {"GET", "POST", "PUT", "PATCH", "DELETE"})
    for (const char* code : {"200", "201", "404", "409"})
      rest.Add({{"code", code}, {"method", method}, {"host", "10.0.0.1:443"}}).Increment(7);
  auto& replicas = prometheus::BuildGauge()
                       .Name("modelservice_replicas")
                       .Help("Replicas of a ModelService: desired (what the controller asks for) and ready")
                       .Register(registry);
  for (int i = 0; i < 200; ++i)
    for (const char* kind : {"desired", "ready"})
      replicas
          .Add({{"namespace", "team-" + std::to_string(i % 10)}, {"name", "ms-" + std::to_string(i)}, {"kind", kind}})
          .Set(3);
}

BENCHMARK_CAPTURE(SerializeOne, Webhook, FillWebhook)->Name("Serialize/Webhook")->Unit(benchmark::kMicrosecond);

BENCHMARK_CAPTURE(SerializeOne, Controller, FillController)
    ->Name("Serialize/Controller")
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
