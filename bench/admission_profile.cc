// Runs the pure admission path N times, for profilers whose numbers do not
// depend on a noisy machine:
//
//   valgrind --tool=callgrind build-bench/bench/admission_profile valid 200
//   perf record -g build-bench/bench/admission_profile valid 20000
//
// Scenarios: valid (validate, allowed), invalid (validate, denied), mutate.
// Instructions per review = (Ir at N=K+1 - Ir at N=1) / K; bench/run.sh
// --callgrind does exactly that.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "shared/process/files.h"
#include "webhook/admission/mutating_handler.h"
#include "webhook/admission/review.h"
#include "webhook/admission/validating_handler.h"

#ifndef MS_BENCH_FIXTURES
#error "MS_BENCH_FIXTURES must name the fixtures directory"
#endif

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: admission_profile valid|invalid|mutate N\n";
    return 2;
  }
  const std::string scenario = argv[1];
  const long n = std::atol(argv[2]);
  const char* file = scenario == "valid"     ? "validate-valid.json"
                     : scenario == "invalid" ? "validate-invalid.json"
                     : scenario == "mutate"  ? "mutate-defaults.json"
                                             : nullptr;
  if (!file || n < 0) {
    std::cerr << "usage: admission_profile valid|invalid|mutate N\n";
    return 2;
  }
  const std::string body = ms::process::ReadFile(std::string(MS_BENCH_FIXTURES) + "/" + file);
  ms::admission::ValidatingHandler validating;
  ms::admission::MutatingHandler mutating;
  const ms::admission::Handler& handler =
      scenario == "mutate" ? static_cast<const ms::admission::Handler&>(mutating) : validating;
  size_t bytes = 0;
  int status = 0;
  for (long i = 0; i < n; ++i) {
    ms::admission::Outcome outcome;
    auto reply = ms::admission::ServeReview(body, "application/json", handler, &outcome);
    bytes += reply.body.size();
    status = reply.status;
  }
  std::cout << scenario << ": " << n << " reviews, last status " << status << ", " << bytes << " response bytes\n";
  return status == 200 || n == 0 ? 0 : 1;
}
