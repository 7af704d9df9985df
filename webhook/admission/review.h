// From an HTTP request body to the HTTP answer, around a Handler. Pure: no
// I/O, so every bad-input case is unit-testable without a socket.
//
//   200 + AdmissionReview v1   a well-formed review (allowed or denied)
//   400 text/plain             body not JSON (nlohmann's message; a NUL byte
//                              or a number beyond a double are not JSON
//                              either), nested too deep, not an
//                              AdmissionReview, admission.k8s.io/v1beta1
//                              (refused: configure admissionReviewVersions [v1]),
//                              no request.uid
//   413 text/plain             body over the limit (3 MiB, as the API server)
//   415 text/plain             Content-Type not application/json
#pragma once

#include <string>
#include <string_view>

#include "shared/transport/response.h"
#include "webhook/admission/handler.h"

namespace ms::admission {

inline constexpr size_t kMaxBodyBytes = 3 * 1024 * 1024;
inline constexpr int kMaxNestingDepth = 64;

// What happened, for metrics and the log.
struct Outcome {
  std::string operation;  // CREATE, UPDATE, ... ("" when the review was unreadable)
  std::string decision;   // "allowed", "denied" or "rejected" (not a valid review)
  std::string uid;
  std::string kind;      // request.kind.kind: ModelService, or Scale for the scale subresource
  std::string ns, name;  // the object's namespace and name (generateName when it has no name yet)
  std::string message;   // the denial or rejection message
  int status_code = 0;   // response.status.code of a denial

  // "namespace/name" ("name" without a namespace), for log lines.
  std::string Object() const { return ns.empty() ? name : ns + "/" + name; }
};

transport::Response ServeReview(std::string_view body, std::string_view content_type, const Handler& handler,
                                Outcome* outcome = nullptr);

// The operation as a metric label value. Label values taken from a request
// come from a closed set, or every new string a client sends would be a new
// series kept for the life of the process: CREATE, UPDATE, DELETE, CONNECT,
// and UNKNOWN for anything else (also the empty string).
std::string_view OperationLabel(std::string_view operation);

// True when the JSON text nests objects/arrays deeper than `limit` (strings
// skipped). Linear, no recursion.
bool NestingExceeds(std::string_view text, int limit);

}  // namespace ms::admission
