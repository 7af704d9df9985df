// The admission path without the network: where a review's time goes.
//
//   ServeReview/*           the whole pure path the HTTP handler runs
//                           (parse, envelope checks, handler, response dump)
//   JsonParse/*             nlohmann::json::parse of the same body, alone
//   JsonDump/*              dumping the response AdmissionReview, alone
//   ValidateModelService    the hand-written checks + the schema safety net
//   SchemaValidate/*        ms::api::SchemaValidator::Validate (a valijson::Validator
//                           constructed per call, as shared/api/schema.cc does)
//   Valijson/*              valijson directly: a fresh Validator per call vs
//                           one reused Validator (its regex cache kept), to
//                           show what constructing one per call costs
//   StdRegex/*              compiling and matching the schema's patterns
//
// Fixtures are the same files run.sh sends over HTTPS (bench/fixtures).
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>
#include <string>

#include "shared/api/schema.h"
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
  ms::api::SchemaValidator schema;
  ms::admission::ValidatingHandler validating{schema};
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

void BM_ParseReviewFast(benchmark::State& state, const std::string* body) {
  for (auto _ : state) {
    auto j = ms::admission::ParseReviewFast(*body, ms::admission::kMaxNestingDepth);
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
    auto outcome = ms::api::ValidateModelService(object, F().schema);
    benchmark::DoNotOptimize(outcome);
  }
}

void BM_CheckFieldsOnly(benchmark::State& state, const std::string* body) {
  const json object = json::parse(*body)["request"]["object"];
  for (auto _ : state) {
    auto parsed = ms::api::ParseModelService(object);
    ms::api::CheckCrossFields(parsed.spec, parsed.errors);
    ms::api::AddWarnings(parsed.spec, parsed.warnings);
    benchmark::DoNotOptimize(parsed);
  }
}

// The probe ValidateModelService builds: {"spec": <spec>}.
json SpecProbe(const std::string& body) {
  json probe = json::object();
  probe["spec"] = json::parse(body)["request"]["object"]["spec"];
  return probe;
}

void BM_SchemaValidate(benchmark::State& state, const std::string* body) {
  const json probe = SpecProbe(*body);
  for (auto _ : state) {
    auto errors = F().schema.Validate(probe);
    benchmark::DoNotOptimize(errors);
  }
}

struct CompiledSchema {
  json document = json::parse(ms::api::kModelServiceSchemaJson);
  valijson::Schema schema;
  CompiledSchema() {
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft4);
    valijson::adapters::NlohmannJsonAdapter adapter(document);
    parser.populateSchema(adapter, schema);
  }
};

const valijson::Schema& Compiled() {
  static const CompiledSchema c;
  return c.schema;
}

// What shared/api/schema.cc does today: a Validator per call, so every `pattern`
// is compiled into a std::regex again on every validation.
void BM_Valijson_FreshValidatorPerCall(benchmark::State& state, const std::string* body) {
  const json probe = SpecProbe(*body);
  valijson::adapters::NlohmannJsonAdapter target(probe);
  for (auto _ : state) {
    valijson::Validator validator(valijson::Validator::kStrongTypes);
    valijson::ValidationResults results;
    bool ok = validator.validate(Compiled(), target, &results);
    benchmark::DoNotOptimize(ok);
  }
}

// The alternative: one Validator per thread (thread_local), reused; its regex
// cache survives between calls.
void BM_Valijson_ReusedValidator(benchmark::State& state, const std::string* body) {
  const json probe = SpecProbe(*body);
  valijson::adapters::NlohmannJsonAdapter target(probe);
  valijson::Validator validator(valijson::Validator::kStrongTypes);
  for (auto _ : state) {
    valijson::ValidationResults results;
    bool ok = validator.validate(Compiled(), target, &results);
    benchmark::DoNotOptimize(ok);
  }
}

void BM_StdRegex_CompileModelPattern(benchmark::State& state) {
  for (auto _ : state) {
    std::regex re("^[^\\s\\x00-\\x1F\\x7F]+$");
    benchmark::DoNotOptimize(re);
  }
}
void BM_StdRegex_CompilePercentPattern(benchmark::State& state) {
  for (auto _ : state) {
    std::regex re("^(100|[1-9]?[0-9])%$");
    benchmark::DoNotOptimize(re);
  }
}
void BM_StdRegex_MatchModel(benchmark::State& state) {
  const std::regex re("^[^\\s\\x00-\\x1F\\x7F]+$");
  const std::string model = "bert-base-uncased";
  for (auto _ : state) {
    bool m = std::regex_search(model, re);
    benchmark::DoNotOptimize(m);
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
BENCHMARK_CAPTURE(BM_ParseReviewFast, valid, Valid());
BENCHMARK_CAPTURE(BM_ParseReviewFast, mutate, Mutate());
BENCHMARK(BM_JsonDump_Response);
BENCHMARK_CAPTURE(BM_ValidateModelService, valid, Valid());
BENCHMARK_CAPTURE(BM_ValidateModelService, invalid, Invalid());
BENCHMARK_CAPTURE(BM_CheckFieldsOnly, valid, Valid());
BENCHMARK_CAPTURE(BM_SchemaValidate, valid, Valid());
BENCHMARK_CAPTURE(BM_SchemaValidate, invalid, Invalid());
BENCHMARK_CAPTURE(BM_Valijson_FreshValidatorPerCall, valid, Valid());
BENCHMARK_CAPTURE(BM_Valijson_ReusedValidator, valid, Valid());
BENCHMARK(BM_StdRegex_CompileModelPattern);
BENCHMARK(BM_StdRegex_CompilePercentPattern);
BENCHMARK(BM_StdRegex_MatchModel);

BENCHMARK_MAIN();
