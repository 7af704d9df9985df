// `modelservice-webhook validate` over 10,000 documents: the samples of
// manifests/samples/ (valid and invalid), renamed and repeated into one
// multi-document stream. Times reading (YAML -> JSON) alone and the whole
// validation (read, default, validate), best of several runs, in CPU time
// of this process (one thread, so one core). bench/validate.sh runs it
// pinned to one core and times the real command on the same file.
//
//   validate_bench [DOCUMENTS] [OUT.yaml]   (writes the stream to OUT.yaml)
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "shared/process/files.h"
#include "webhook/validate/validate.h"
#include "webhook/validate/yaml_reader.h"

#ifndef MS_SOURCE_DIR
#error "MS_SOURCE_DIR must name the checkout"
#endif

namespace {

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The samples' documents, each with a distinct metadata.name, to `count`.
std::string Stream(size_t count) {
  std::vector<std::string> samples;
  for (const char* dir : {"/manifests/samples", "/manifests/samples/invalid"})
    for (const auto& e : std::filesystem::directory_iterator(std::string(MS_SOURCE_DIR) + dir))
      if (e.path().extension() == ".yaml") samples.push_back(ms::process::ReadFile(e.path().string()));
  std::sort(samples.begin(), samples.end());
  std::string out;
  for (size_t i = 0; i < count; ++i) {
    std::string doc = samples[i % samples.size()];
    const auto pos = doc.find("  name: ");
    const auto eol = doc.find('\n', pos);
    doc.insert(eol, "-" + std::to_string(i));
    out += "---\n" + doc;
  }
  return out;
}

template <typename F>
double Best(int runs, F f) {
  double best = 1e9;
  for (int i = 0; i < runs; ++i) {
    const double t0 = CpuSeconds();
    f();
    best = std::min(best, CpuSeconds() - t0);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t count = argc > 1 ? std::stoul(argv[1]) : 10000;
  const std::string text = Stream(count);
  if (argc > 2) std::ofstream(argv[2], std::ios::binary) << text;

  const ms::validate::Validator validator;
  size_t docs = 0, invalid = 0;
  const double read = Best(5, [&] { docs = ms::validate::ReadYaml(text).documents.size(); });
  const double all = Best(5, [&] {
    ms::validate::Report report;
    validator.AddStream("bench.yaml", text, report);
    docs = report.results.size();
    invalid = report.invalid();
  });
  std::printf("documents %zu (%zu invalid), %zu bytes\n", docs, invalid, text.size());
  std::printf("read (YAML -> JSON)            %7.1f ms  %5.2f us/document\n", read * 1e3, read * 1e6 / docs);
  std::printf("read + default + validate      %7.1f ms  %5.2f us/document\n", all * 1e3, all * 1e6 / docs);
  return docs == count ? 0 : 1;
}
