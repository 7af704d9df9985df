// libFuzzer: the fast review parser (RapidJSON) against nlohmann::json::parse,
// its reference. Wherever the fast parser accepts a body, nlohmann accepts it
// too and gives the same tree (values and number types), less the subtrees
// the fast path leaves out (of oldObject it keeps the spec only); a body
// deeper than the limit is never accepted.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "webhook/admission/review.h"
#include "webhook/admission/review_parser.h"

namespace {

using nlohmann::json;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

// Same values and number types.
bool SameTree(const json& a, const json& b) {
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
  ms::webhook::FastParse fast = ms::webhook::ParseReviewFast(body, kDepth);
  if (fast.status != ms::webhook::FastParse::kOk) return 0;
  Check(!ms::webhook::NestingExceeds(body, kDepth), "a body deeper than the limit is not accepted");
  json reference;
  try {
    reference = json::parse(body);
  } catch (const json::exception&) {
    Check(false, "accepted a body nlohmann refuses");
  }
  if (reference.is_object() && reference.contains("request") && reference["request"].is_object()) {
    json& r = reference["request"];
    if (r.contains("oldObject") && r["oldObject"].is_object()) {  // only its spec is kept (ratcheting)
      json kept = json::object();
      if (r["oldObject"].contains("spec")) kept["spec"] = r["oldObject"]["spec"];
      r["oldObject"] = std::move(kept);
    }
    r.erase("userInfo");
    r.erase("options");
    if (r.contains("object") && r["object"].is_object() && r["object"].contains("metadata") &&
        r["object"]["metadata"].is_object())
      r["object"]["metadata"].erase("managedFields");
  }
  Check(SameTree(fast.value, reference), "the same tree as nlohmann's");
  return 0;
}
