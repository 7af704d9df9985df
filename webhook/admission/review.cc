#include "webhook/admission/review.h"

#include <optional>

#include "shared/text/utf8.h"
#include "webhook/admission/review_parser.h"

namespace ms::admission {

using nlohmann::json;

namespace {

// `message` may quote the client's bytes (nlohmann's "last read: '...'", a
// Content-Type): the answer is UTF-8 and so is the log line made of it.
transport::Response Plain(int status, std::string message, Outcome* outcome) {
  message = text::SanitizeUtf8(message);
  if (outcome) {
    outcome->decision = "rejected";
    outcome->message = message;
  }
  return {status, "text/plain; charset=utf-8", std::move(message) + "\n", {}};
}

transport::Response TooDeep(Outcome* outcome) {
  return Plain(400, "request body nests deeper than " + std::to_string(kMaxNestingDepth) + " levels", outcome);
}

bool IsJsonContentType(std::string_view ct) {
  auto semi = ct.find(';');
  std::string_view media = ct.substr(0, semi);
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  std::string lower(media);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "application/json";
}

}  // namespace

std::string_view OperationLabel(std::string_view operation) {
  for (std::string_view known : {"CREATE", "UPDATE", "DELETE", "CONNECT"})
    if (operation == known) return known;
  return "UNKNOWN";
}

bool NestingExceeds(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > limit) return true;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return false;
}

namespace {

// Parses `body` into `review` (review_parser.h): the reply refusing it, or
// nothing.
std::optional<transport::Response> ParseBody(std::string_view body, std::string_view content_type, ParsedReview& review,
                                             Outcome* outcome) {
  if (body.size() > kMaxBodyBytes)
    return Plain(413,
                 "request body too large: " + std::to_string(body.size()) + " bytes, the limit is " +
                     std::to_string(kMaxBodyBytes),
                 outcome);
  if (!IsJsonContentType(content_type))
    return Plain(415, "unsupported Content-Type \"" + std::string(content_type) + "\": expected application/json",
                 outcome);
  review = ParseReview(body, kMaxNestingDepth);
  if (review.status == ParsedReview::kTooDeep) return TooDeep(outcome);
  if (review.status == ParsedReview::kOk) return std::nullopt;
  // Not JSON: nlohmann's parser words why (the review parser refuses exactly
  // what it refuses, review_parser.h), after the depth check that keeps its
  // recursion bounded. JSON has no raw NUL bytes; nlohmann's parser would
  // stop at one and ignore what follows.
  if (NestingExceeds(body, kMaxNestingDepth)) return TooDeep(outcome);
  if (auto nul = body.find('\0'); nul != std::string_view::npos)
    return Plain(400, "request body is not valid JSON: a NUL byte at offset " + std::to_string(nul), outcome);
  std::string why = "refused by the webhook's parser";  // never kept: the two parsers agree
  try {
    [[maybe_unused]] const json parsed = json::parse(body);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e400
    why = e.what();
  }
  return Plain(400, "request body is not valid JSON: " + why, outcome);
}

// The reply refusing what is not an admission.k8s.io/v1 AdmissionReview
// with a request, or nothing.
std::optional<transport::Response> CheckEnvelope(const ParsedReview& review, Outcome* outcome) {
  if (!review.is_object) return Plain(400, "request body is not a JSON object: expected an AdmissionReview", outcome);
  if (review.kind != "AdmissionReview") return Plain(400, "expected kind AdmissionReview", outcome);
  const auto& api_version = review.api_version;
  if (!api_version) return Plain(400, "expected apiVersion admission.k8s.io/v1", outcome);
  if (*api_version == "admission.k8s.io/v1beta1")
    return Plain(400,
                 "admission.k8s.io/v1beta1 AdmissionReview is not supported: set admissionReviewVersions: [\"v1\"] "
                 "in the webhook configuration",
                 outcome);
  if (*api_version != "admission.k8s.io/v1")
    return Plain(400,
                 "unsupported apiVersion " + json(std::string(*api_version)).dump() + ": expected admission.k8s.io/v1",
                 outcome);
  if (!review.request) return Plain(400, "AdmissionReview has no request", outcome);
  return std::nullopt;
}

// What the log line and the metrics say of a request and its answer.
void FillOutcome(const AdmissionRequest& request, AdmissionResponse&& response, Outcome& outcome) {
  outcome.uid = request.uid;
  outcome.operation = request.operation;
  outcome.decision = response.allowed ? "allowed" : "denied";
  if (!response.allowed) {
    outcome.message = std::move(response.message);
    outcome.status_code = response.code;
  }
  outcome.ns = request.namespace_;
  outcome.name = request.name;
  if (const auto& obj = request.object; outcome.name.empty() && obj) {
    outcome.name = JsonString(obj->name).value_or("");
    if (outcome.name.empty()) outcome.name = JsonString(obj->generate_name).value_or("");
  }
  if (const auto& kind = request.kind) outcome.kind = kind->kind;
}

}  // namespace

transport::Response ServeReview(std::string_view body, std::string_view content_type, const Handler& handler,
                                Outcome* outcome) {
  ParsedReview review;
  if (auto refusal = ParseBody(body, content_type, review, outcome)) return *refusal;
  if (auto refusal = CheckEnvelope(review, outcome)) return *refusal;
  const AdmissionRequest& request = *review.request;
  const std::string_view uid = request.uid;
  if (uid.empty()) return Plain(400, "AdmissionReview request has no uid", outcome);

  AdmissionResponse response;
  try {
    response = handler.Handle(request);
  } catch (const std::exception& e) {
    // A bug, not the client's fault: deny (never allow by accident) and say so.
    response = Denied(500, "InternalError", std::string("internal error in the admission webhook: ") + e.what());
  }
  std::string answer = WriteAdmissionReview(response, uid);
  if (outcome) FillOutcome(request, std::move(response), *outcome);
  return {200, "application/json", std::move(answer), {}};
}

}  // namespace ms::admission
