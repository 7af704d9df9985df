// libFuzzer: ServeReview (body -> HTTP answer) on random bodies, for both
// handlers. Invariant: never allowed:true unless the reference path says so
// on the same body: nlohmann::json::parse accepts it, it is an
// admission.k8s.io/v1 AdmissionReview with a uid, and the handler allows the
// request nlohmann parsed. Every answer is valid UTF-8; a 200 is JSON.
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>
#include <string_view>

#include "shared/text/utf8.h"
#include "webhook/admission/mutating_handler.h"
#include "webhook/admission/review.h"
#include "webhook/admission/validating_handler.h"

namespace {

using nlohmann::json;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

// A string member's text, else "" (AdmissionRequest's rule).
std::string_view Text(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>())
                                               : std::string_view();
}

// The request as AdmissionRequest holds it, read from nlohmann's tree.
// The texts the request's views point into.
struct Texts {
  std::deque<std::string> held;
  std::string_view Hold(const json& v) { return held.emplace_back(v.dump()); }
};

// request.object or request.oldObject as RequestObject holds it, from nlohmann's tree.
ms::admission::RequestObject ObjectOf(const json& o, Texts& texts) {
  ms::admission::RequestObject out;
  out.json = texts.Hold(o);
  out.is_object = o.is_object();
  if (!o.is_object()) return out;
  if (o.contains("apiVersion")) out.api_version = texts.Hold(o["apiVersion"]);
  if (o.contains("kind")) out.kind = texts.Hold(o["kind"]);
  if (o.contains("spec")) out.spec = texts.Hold(o["spec"]);
  if (auto md = o.find("metadata"); md != o.end() && md->is_object()) {
    if (md->contains("name")) out.name = texts.Hold((*md)["name"]);
    if (md->contains("generateName")) out.generate_name = texts.Hold((*md)["generateName"]);
  }
  return out;
}

ms::admission::AdmissionRequest RequestOf(const json& r, Texts& texts) {
  ms::admission::AdmissionRequest out;
  out.uid = Text(r, "uid");
  out.sub_resource = Text(r, "subResource");
  out.name = Text(r, "name");
  out.namespace_ = Text(r, "namespace");
  out.operation = Text(r, "operation");
  if (auto k = r.find("kind"); k != r.end() && k->is_object()) out.kind = {Text(*k, "group"), Text(*k, "kind")};
  if (auto k = r.find("resource"); k != r.end() && k->is_object())
    out.resource = {Text(*k, "group"), Text(*k, "resource")};
  if (auto o = r.find("object"); o != r.end()) {
    out.object = ObjectOf(*o, texts);
    out.model_service = ms::api::ParseModelService(*o);
  }
  if (auto o = r.find("oldObject"); o != r.end()) out.old_object = ObjectOf(*o, texts);
  return out;
}

// The reference verdict: nlohmann alone.
bool ReferenceAllows(std::string_view body, const ms::admission::Handler& handler) {
  if (body.find('\0') != std::string_view::npos || ms::admission::NestingExceeds(body, ms::admission::kMaxNestingDepth))
    return false;
  json review;
  try {
    review = json::parse(body);
  } catch (const json::exception&) {
    return false;
  }
  if (!review.is_object() || review.value("kind", json()) != "AdmissionReview" ||
      review.value("apiVersion", json()) != "admission.k8s.io/v1")
    return false;
  auto request = review.find("request");
  if (request == review.end() || !request->is_object()) return false;
  auto uid = request->find("uid");
  if (uid == request->end() || !uid->is_string() || uid->get_ref<const std::string&>().empty()) return false;
  try {
    Texts texts;
    return handler.Handle(RequestOf(*request, texts)).allowed;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ms::admission::ValidatingHandler validating;
  static const ms::admission::MutatingHandler mutating;
  if (size == 0) return 0;
  const ms::admission::Handler& handler = data[0] & 1 ? static_cast<const ms::admission::Handler&>(mutating)
                                                      : static_cast<const ms::admission::Handler&>(validating);
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);

  ms::admission::Outcome outcome;
  const ms::transport::Response reply = ms::admission::ServeReview(body, "application/json", handler, &outcome);
  Check(ms::text::IsValidUtf8(reply.body), "the answer is valid UTF-8");
  Check(ms::text::IsValidUtf8(outcome.message), "the logged message is valid UTF-8");
  if (reply.status != 200) {
    Check(outcome.decision == "rejected", "a non-200 answer is a rejection");
    return 0;
  }
  json answer;
  try {
    answer = json::parse(reply.body);
  } catch (const json::exception&) {
    Check(false, "a 200 answer is JSON");
  }
  const bool allowed = answer["response"].value("allowed", false);
  Check(allowed == (outcome.decision == "allowed"), "the outcome says what the answer says");
  if (allowed) Check(ReferenceAllows(body, handler), "allowed only what the nlohmann path allows");
  return 0;
}
