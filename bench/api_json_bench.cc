// The parse of one LIST page of ModelServices whose annotations are large
// (issue 23 item 7): nlohmann's DOM parser dropping managedFields (what the
// controller did before) against kube::ParseApiJson keeping no annotation
// (RapidJSON's SAX reader into nlohmann's tree, what the informers do now).
// One variant per process, so that each peak is its own:
//   api_json_bench nlohmann|sax [ITEMS] [ANNOTATION_KIB]
// prints the time of one parse and the memory it added at its peak (VmHWM
// after, reset before the parse, minus VmRSS before, the page itself
// already in memory).
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "controller/kube/api_json.h"

namespace {

long StatusKib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(line.find(':') + 1));
  }
  return -1;
}

std::string Page(int items, int annotation_kib) {
  const std::string blob(static_cast<size_t>(annotation_kib) * 1024, 'x');
  std::string page = R"({"apiVersion":"modelops.dev/v1","items":[)";
  for (int i = 0; i < items; ++i) {
    if (i > 0) page += ',';
    page += R"({"apiVersion":"modelops.dev/v1","kind":"ModelService","metadata":{"annotations":{"tenant/blob":")" +
            blob + R"("},"name":"r-)" + std::to_string(i) +
            R"(","namespace":"e2e","resourceVersion":"1","uid":"u","managedFields":[{"manager":"kubectl"}]},)"
            R"("spec":{"model":"m","image":"registry.local/serve:1.4","replicas":1,"port":8080},"status":{}})";
  }
  return page + R"(],"kind":"ModelServiceList","metadata":{"continue":"","resourceVersion":"9"}})";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string variant = argc > 1 ? argv[1] : "sax";
  const int items = argc > 2 ? std::stoi(argv[2]) : 100;
  const int kib = argc > 3 ? std::stoi(argv[3]) : 200;
  const std::string page = Page(items, kib);
  std::ofstream("/proc/self/clear_refs") << "5";  // resets VmHWM to VmRSS: the page's making is not counted
  const long before = StatusKib("VmRSS:");
  const auto start = std::chrono::steady_clock::now();
  nlohmann::json parsed;
  if (variant == "nlohmann") {
    const nlohmann::json::parser_callback_t drop = [](int, nlohmann::json::parse_event_t event, nlohmann::json& v) {
      return !(event == nlohmann::json::parse_event_t::key && v == "managedFields");
    };
    parsed = nlohmann::json::parse(page, drop, false);
  } else {
    const ms::kube::KeptAnnotations none;
    parsed = ms::kube::ParseApiJson(page, &none);
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const long peak = StatusKib("VmHWM:");
  std::printf("%s: %d items x %d KiB (page %.1f MiB): parse %.0f ms, peak added %.1f MiB, items %zu\n", variant.c_str(),
              items, kib, page.size() / 1048576.0, ms, (peak - before) / 1024.0, parsed["items"].size());
  return parsed.is_discarded() ? 1 : 0;
}
