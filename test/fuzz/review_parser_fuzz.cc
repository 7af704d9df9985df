// libFuzzer: the review parser (review_parser.h) against nlohmann::json::parse,
// its reference. Wherever the parser accepts a body, nlohmann accepts it
// too and what it read (ParsedReview::View) is nlohmann's tree read the same
// way (values and number types; the members review_parser.h lists);
// wherever it refuses a body (one without a NUL byte, within the depth
// limit), nlohmann refuses it too; a body deeper than the limit is never
// accepted.
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
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

// A string member's text, else "" (AdmissionRequest's rule).
std::string Text(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// What ParsedReview::View() must be, from nlohmann's tree.
json View(const json& review) {
  if (!review.is_object()) return nullptr;
  json j = json::object();
  for (const char* k : {"apiVersion", "kind"})
    if (review.contains(k) && review[k].is_string()) j[k] = review[k];
  if (!review.contains("request") || !review["request"].is_object()) return j;
  const json& r = review["request"];
  json& out = j["request"] = json::object();
  for (const char* k : {"uid", "subResource", "name", "namespace", "operation"}) out[k] = Text(r, k);
  if (r.contains("kind") && r["kind"].is_object())
    out["kind"] = {{"group", Text(r["kind"], "group")}, {"kind", Text(r["kind"], "kind")}};
  if (r.contains("resource") && r["resource"].is_object())
    out["resource"] = {{"group", Text(r["resource"], "group")}, {"resource", Text(r["resource"], "resource")}};
  for (const char* name : {"object", "oldObject"}) {
    if (!r.contains(name)) continue;
    const json& o = r[name];
    json& v = out[name] = {{"json", o}, {"isObject", o.is_object()}};
    if (!o.is_object()) continue;
    for (const char* m : {"apiVersion", "kind", "spec"})
      if (o.contains(m)) v[m] = o[m];
    if (o.contains("metadata") && o["metadata"].is_object())
      for (const char* m : {"name", "generateName"})
        if (o["metadata"].contains(m)) v[m] = o["metadata"][m];
  }
  return j;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  constexpr int kDepth = 16;
  ms::admission::ParsedReview fast = ms::admission::ParseReview(body, kDepth);
  if (fast.status == ms::admission::ParsedReview::kInvalid && body.find('\0') == std::string::npos &&
      !ms::admission::NestingExceeds(body, kDepth)) {
    bool refused = false;
    try {
      [[maybe_unused]] const json parsed = json::parse(body);
    } catch (const json::exception&) {
      refused = true;
    }
    Check(refused, "refused a body nlohmann takes");
  }
  if (fast.status != ms::admission::ParsedReview::kOk) return 0;
  Check(!ms::admission::NestingExceeds(body, kDepth), "a body deeper than the limit is not accepted");
  json reference;
  try {
    reference = json::parse(body);
  } catch (const json::exception&) {
    Check(false, "accepted a body nlohmann refuses");
  }
  Check(SameTree(fast.View(), View(reference)), "what nlohmann's tree holds");
  return 0;
}
