#include "webhook/admission/response.h"

#include "shared/api/field_error.h"
#include "shared/text/base64.h"
#include "shared/text/json_text.h"

namespace ms::admission {

void LimitWarnings(std::vector<std::string>& warnings) {
  const size_t more = warnings.size() > kMaxWarnings ? warnings.size() - kMaxWarnings : 0;
  if (more) warnings.resize(kMaxWarnings);
  for (auto& w : warnings) {
    if (w.size() > kMaxWarningBytes) w = api::CutText(std::move(w), kMaxWarningBytes);
  }
  if (more) warnings.push_back("... and " + std::to_string(more) + (more == 1 ? " more warning" : " more warnings"));
}

AdmissionResponse Allowed() { return {}; }

AdmissionResponse Denied(int code, std::string reason, std::string message) {
  AdmissionResponse r;
  r.allowed = false;
  r.code = code;
  r.reason = std::move(reason);
  r.message = std::move(message);
  return r;
}

std::string WriteAdmissionReview(const AdmissionResponse& response, std::string_view uid) {
  std::string out;
  out.reserve(160 + uid.size() + response.message.size() + response.patch.size() * 4 / 3);
  // Members in key order, as nlohmann keeps them.
  out += R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"allowed":)";
  out += response.allowed ? "true" : "false";
  if (!response.patch.empty()) {
    out += R"(,"patch":")";
    out += text::Base64Encode(response.patch);
    out += R"(","patchType":"JSONPatch")";
  }
  if (!response.allowed) {
    out += R"(,"status":{"code":)";
    out += std::to_string(response.code);
    out += R"(,"message":)";
    text::AppendJsonString(out, response.message);
    out += R"(,"metadata":{},"reason":)";
    text::AppendJsonString(out, response.reason);
    out += R"(,"status":"Failure"})";
  }
  out += R"(,"uid":)";
  text::AppendJsonString(out, uid);
  if (!response.warnings.empty()) {
    out += R"(,"warnings":[)";
    for (size_t i = 0; i < response.warnings.size(); ++i) {
      if (i) out += ',';
      text::AppendJsonString(out, response.warnings[i]);
    }
    out += ']';
  }
  out += "}}";
  return out;
}

}  // namespace ms::admission
