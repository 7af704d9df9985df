// An AdmissionResponse (the `response` of an admission.k8s.io/v1
// AdmissionReview) as the handlers give it, and the AdmissionReview's text
// written from it directly: the same bytes nlohmann's dump() of the same
// object writes (members in key order), without building that object.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ms::admission {

struct AdmissionResponse {
  bool allowed = true;
  // A denial's status (a metav1.Status with status Failure).
  int code = 0;
  std::string reason, message;
  std::vector<std::string> warnings;
  // The JSON Patch (RFC 6902) text of a mutation, sent base64-encoded with
  // patchType JSONPatch; empty: no patch.
  std::string patch;
};

// The API server keeps at most 4 KiB (runes) of warnings a request: past
// that it cuts each to 256 and drops the rest (its warning recorder). An
// answer carries at most kMaxWarnings warnings of at most kMaxWarningBytes
// each (api::CutText: "...[cut N bytes]" included), then
// "... and N more warnings": 16 lines of at most 256 bytes, so the API
// server passes them on whole.
inline constexpr size_t kMaxWarnings = 15;
inline constexpr size_t kMaxWarningBytes = 256;
void LimitWarnings(std::vector<std::string>& warnings);

AdmissionResponse Allowed();
AdmissionResponse Denied(int code, std::string reason, std::string message);

// {"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{...,"uid":uid}}.
std::string WriteAdmissionReview(const AdmissionResponse& response, std::string_view uid);

}  // namespace ms::admission
