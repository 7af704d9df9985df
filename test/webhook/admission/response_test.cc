// WriteAdmissionReview writes, byte for byte, what nlohmann's dump() wrote
// of the AdmissionReview object the handlers used to build: every kind of
// answer (allowed, denied, with warnings, with a patch), with strings that
// need escaping.
#include "webhook/admission/response.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "shared/text/base64.h"

namespace ms::admission {
namespace {

using nlohmann::json;

// The object as it was built with nlohmann, then dumped.
std::string AsNlohmannWroteIt(const AdmissionResponse& r, const std::string& uid) {
  json response(json::value_t::object);
  response["allowed"] = r.allowed;
  if (!r.allowed) {
    json status(json::value_t::object);
    status["metadata"] = json::object();
    status["status"] = "Failure";
    status["code"] = r.code;
    status["reason"] = r.reason;
    status["message"] = r.message;
    response["status"] = std::move(status);
  }
  if (!r.warnings.empty()) response["warnings"] = r.warnings;
  if (!r.patch.empty()) {
    response["patchType"] = "JSONPatch";
    response["patch"] = text::Base64Encode(r.patch);
  }
  response["uid"] = uid;
  json out(json::value_t::object);
  out["apiVersion"] = "admission.k8s.io/v1";
  out["kind"] = "AdmissionReview";
  out["response"] = std::move(response);
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

TEST(Response, WrittenAsNlohmannWroteIt) {
  std::vector<AdmissionResponse> responses;
  responses.push_back(Allowed());
  responses.push_back(Denied(422, "Invalid", "spec.replicas: Invalid value: 0: must be between 1 and 100"));
  responses.push_back(Denied(400, "BadRequest", "request.object is not a ModelService (kind \"Pod\\\u0001\")"));
  responses.push_back(Denied(500, "InternalError", "internal error in the admission webhook: \t\n\xc3\xa9"));
  AdmissionResponse warned = Allowed();
  warned.warnings = {"unknown field \"spec.colour\"", "spec.gpus is 1 but spec.image is not set"};
  responses.push_back(warned);
  AdmissionResponse denied_warned = Denied(422, "Invalid", "x");
  denied_warned.warnings = {"w"};
  responses.push_back(denied_warned);
  AdmissionResponse patched = Allowed();
  patched.patch = R"([{"op":"add","path":"/spec/port","value":8080}])";
  responses.push_back(patched);
  AdmissionResponse patched_warned = patched;
  patched_warned.warnings = {"a", "b\"c"};
  responses.push_back(patched_warned);
  for (const auto& r : responses)
    for (const std::string uid : {"705ab4f5-6393-11e8-b7cc-42010a800002", "u\"i\\d", ""})
      EXPECT_EQ(WriteAdmissionReview(r, uid), AsNlohmannWroteIt(r, uid)) << r.message;
}

// An answer carries at most kMaxWarnings warnings of at most
// kMaxWarningBytes, then how many more there were: 16 lines within the API
// server's 4 KiB of warnings, which it then passes on whole.
TEST(LimitWarnings, KeepsFifteenShortWarningsAndCountsTheRest) {
  std::vector<std::string> few = {"a", "b"};
  LimitWarnings(few);
  EXPECT_EQ(few, (std::vector<std::string>{"a", "b"}));
  std::vector<std::string> many;
  for (int i = 0; i < 110000; ++i) many.push_back("unknown field \"spec.k" + std::to_string(i) + "\"");
  many[3] = "unknown field \"spec." + std::string(10000, 'x') + "\"";
  LimitWarnings(many);
  ASSERT_EQ(many.size(), kMaxWarnings + 1);
  EXPECT_EQ(many[0], "unknown field \"spec.k0\"");
  EXPECT_EQ(many[3], "unknown field \"spec." + std::string(236 - 20, 'x') + "...[cut " +
                         std::to_string(10000 + 21 - 236) + " bytes]");
  EXPECT_EQ(many[14], "unknown field \"spec.k14\"");
  EXPECT_EQ(many[15], "... and 109985 more warnings");
  size_t total = 0;
  for (const auto& w : many) total += w.size();
  EXPECT_LE(total, 4096u);
  std::vector<std::string> sixteen(16, "w");
  LimitWarnings(sixteen);
  EXPECT_EQ(sixteen.back(), "... and 1 more warning");
}

}  // namespace
}  // namespace ms::admission
