// libFuzzer: the fast review parser (json_reader.h into a RapidJSON tree) against nlohmann::json::parse,
// its reference. Wherever the fast parser accepts a body, nlohmann accepts it
// too and gives the same tree (values and number types), less the members
// the fast path leaves out (it keeps those review_parser.h lists); wherever
// it refuses a body (one without a NUL byte, within the depth limit),
// nlohmann refuses it too; a body deeper than the limit is never accepted.
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>

#include "webhook/admission/review.h"
#include "webhook/admission/review_parser.h"

namespace {

using nlohmann::json;

json Keep(json j, std::initializer_list<const char*> names) {
  if (!j.is_object()) return j;
  json kept = json::object();
  for (const char* n : names)
    if (j.contains(n)) kept[n] = std::move(j[n]);
  return kept;
}

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

// Same values and number types. "-0" is nlohmann's signed 0 and RapidJSON's
// unsigned one: the same value to every reader (shared/text/json_ref.h).
bool SameTree(const json& a, const json& b) {
  if (a.is_number_integer() && b.is_number_integer() && a == 0 && b == 0) return true;
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.find(it.key());
      if (other == b.end() || !SameTree(it.value(), *other)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!SameTree(a[i], b[i])) return false;
    return true;
  }
  if (a.is_number_float()) return a.get<double>() == b.get<double>() || (a != a && b != b);
  return a == b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  constexpr int kDepth = 16;
  ms::admission::FastParse fast = ms::admission::ParseReviewFast(body, kDepth);
  if (fast.status == ms::admission::FastParse::kInvalid && body.find('\0') == std::string::npos &&
      !ms::admission::NestingExceeds(body, kDepth)) {
    bool refused = false;
    try {
      [[maybe_unused]] const json parsed = json::parse(body);
    } catch (const json::exception&) {
      refused = true;
    }
    Check(refused, "refused a body nlohmann takes");
  }
  if (fast.status != ms::admission::FastParse::kOk) return 0;
  Check(!ms::admission::NestingExceeds(body, kDepth), "a body deeper than the limit is not accepted");
  json reference;
  try {
    reference = json::parse(body);
  } catch (const json::exception&) {
    Check(false, "accepted a body nlohmann refuses");
  }
  // Only the members the fast path keeps (review_parser.h).
  reference = Keep(std::move(reference), {"apiVersion", "kind", "request"});
  if (reference.is_object() && reference.contains("request") && reference["request"].is_object()) {
    json& r = reference["request"];
    r = Keep(std::move(r),
             {"uid", "kind", "resource", "subResource", "name", "namespace", "operation", "object", "oldObject"});
    if (r.contains("oldObject")) r["oldObject"] = Keep(std::move(r["oldObject"]), {"apiVersion", "kind", "spec"});
    if (r.contains("object") && r["object"].is_object()) {
      json& o = r["object"];
      o = Keep(std::move(o), {"apiVersion", "kind", "metadata", "spec"});
      if (o.contains("metadata")) o["metadata"] = Keep(std::move(o["metadata"]), {"name", "generateName"});
    }
  }
  Check(SameTree(fast.Tree(), reference), "the same tree as nlohmann's");
  return 0;
}
