// The admission path without the network: where a review's time goes.
//
//   ServeReview/*           the whole pure path the HTTP handler runs
//                           (parse, envelope checks, handler, response dump)
//   JsonParse/*             nlohmann::json::parse of the same body, alone
//   JsonDump/*              dumping the response AdmissionReview, alone
//   ValidateModelService/*  the typed parser, the rules between fields and
//                           the warnings over the review's object, parsed
//                           before the loop
//
// Fixtures are the same files run.sh sends over HTTPS (bench/fixtures).
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "shared/api/validation.h"
#include "shared/process/files.h"
#include "webhook/admission/mutating_handler.h"
#include "webhook/admission/review.h"
#include "webhook/admission/review_parser.h"
#include "webhook/admission/validating_handler.h"

#ifndef MS_BENCH_FIXTURES
#error "MS_BENCH_FIXTURES must name the fixtures directory"
#endif

namespace {

using nlohmann::json;

std::string ReadFixture(const char* name) { return ms::process::ReadFile(std::string(MS_BENCH_FIXTURES) + "/" + name); }

struct Fixtures {
  std::string valid = ReadFixture("validate-valid.json");
  std::string invalid = ReadFixture("validate-invalid.json");
  std::string mutate = ReadFixture("mutate-defaults.json");
  ms::admission::ValidatingHandler validating;
  ms::admission::MutatingHandler mutating;
};

const Fixtures& F() {
  static const Fixtures f;
  return f;
}

// Fails the benchmark (instead of timing the wrong thing) when the reply is
// not what the scenario expects.
void Serve(benchmark::State& state, const std::string& body, const ms::admission::Handler& handler,
           const char* expect) {
  {
    ms::admission::Outcome outcome;
    auto reply = ms::admission::ServeReview(body, "application/json", handler, &outcome);
    if (reply.status != 200 || reply.body.find(expect) == std::string::npos) {
      state.SkipWithError(("unexpected reply: " + std::to_string(reply.status) + " " + reply.body).c_str());
      return;
    }
  }
  for (auto _ : state) {
    ms::admission::Outcome outcome;  // as webhook/server.cc does
    auto reply = ms::admission::ServeReview(body, "application/json", handler, &outcome);
    benchmark::DoNotOptimize(reply);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}

void BM_ServeReview_ValidateValid(benchmark::State& state) {
  Serve(state, F().valid, F().validating, "\"allowed\":true");
}
void BM_ServeReview_ValidateInvalid(benchmark::State& state) {
  Serve(state, F().invalid, F().validating, "\"allowed\":false");
}
void BM_ServeReview_Mutate(benchmark::State& state) { Serve(state, F().mutate, F().mutating, "\"patch\""); }

void BM_JsonParse(benchmark::State& state, const std::string* body) {
  for (auto _ : state) {
    json j = json::parse(*body);
    benchmark::DoNotOptimize(j);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body->size()));
}

void BM_ParseReview(benchmark::State& state, const std::string* body) {
  for (auto _ : state) {
    auto j = ms::admission::ParseReview(*body, ms::admission::kMaxNestingDepth);
    benchmark::DoNotOptimize(j);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body->size()));
}

void BM_JsonDump_Response(benchmark::State& state) {
  auto reply = ms::admission::ServeReview(F().invalid, "application/json", F().validating);
  json out = json::parse(reply.body);
  for (auto _ : state) {
    std::string s = out.dump(-1, ' ', false, json::error_handler_t::replace);
    benchmark::DoNotOptimize(s);
  }
}

void BM_ValidateModelService(benchmark::State& state, const std::string* body) {
  const json object = json::parse(*body)["request"]["object"];
  for (auto _ : state) {
    auto outcome = ms::api::ValidateModelService(object);
    benchmark::DoNotOptimize(outcome);
  }
}

const std::string* Valid() { return &F().valid; }
const std::string* Invalid() { return &F().invalid; }
const std::string* Mutate() { return &F().mutate; }

}  // namespace

BENCHMARK(BM_ServeReview_ValidateValid);
BENCHMARK(BM_ServeReview_ValidateInvalid);
BENCHMARK(BM_ServeReview_Mutate);
BENCHMARK_CAPTURE(BM_JsonParse, valid, Valid());
BENCHMARK_CAPTURE(BM_JsonParse, mutate, Mutate());
BENCHMARK_CAPTURE(BM_ParseReview, valid, Valid());
BENCHMARK_CAPTURE(BM_ParseReview, mutate, Mutate());
BENCHMARK(BM_JsonDump_Response);
BENCHMARK_CAPTURE(BM_ValidateModelService, valid, Valid());
BENCHMARK_CAPTURE(BM_ValidateModelService, invalid, Invalid());

BENCHMARK_MAIN();
