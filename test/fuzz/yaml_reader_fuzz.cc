// libFuzzer: the YAML reader of the `validate` command
// (webhook/validate/yaml_reader.h) on random manifests. It must never throw,
// crash, hang or leak; every document it reads, written back by ToYaml
// (yaml_writer.h), reads again as the same JSON value (the round trip the
// command relies on when it prints what it read).
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "webhook/validate/yaml_reader.h"
#include "webhook/validate/yaml_writer.h"

namespace {

// NaN has no JSON text and never equals itself: such documents are left
// out of the round trip.
bool HasNan(const nlohmann::json& v) {
  if (v.is_number_float()) return v.get<double>() != v.get<double>();
  if (v.is_structured())
    for (const auto& child : v)
      if (HasNan(child)) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ms::validate::YamlLimits limits;
  limits.max_alias_nodes = 100'000;
  const ms::validate::YamlReadResult read = ms::validate::ReadYaml(text, limits);
  if (read.error && read.error->empty()) std::abort();  // an error always says what
  for (const auto& doc : read.documents) {
    if (doc.line < 1 || HasNan(doc.value)) continue;
    const std::string yaml = ms::validate::ToYaml(doc.value);
    const ms::validate::YamlReadResult again = ms::validate::ReadYaml(yaml, limits);
    if (again.error || again.documents.size() != 1 || again.documents[0].value != doc.value) {
      std::fprintf(stderr, "invariant broken: round trip of %s\nvia\n%s\n", doc.value.dump().c_str(), yaml.c_str());
      std::abort();
    }
  }
  return 0;
}
