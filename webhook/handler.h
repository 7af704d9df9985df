// The admission Handler interface, as controller-runtime's admission.Handler:
// a pure function from an AdmissionRequest (the `request` object of an
// admission.k8s.io/v1 AdmissionReview) to an AdmissionResponse (the
// `response` object, without `uid`, which the caller echoes).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace ms::webhook {

class Handler {
 public:
  virtual ~Handler() = default;
  virtual nlohmann::json Handle(const nlohmann::json& request) const = 0;
  // "/validate" or "/mutate": the metrics' `webhook` label.
  virtual const std::string& path() const = 0;
};

// Building blocks for responses.
nlohmann::json Allowed();
nlohmann::json Denied(int code, const std::string& reason, const std::string& message);

// The string at obj[key], or "" when absent or not a string.
std::string StringField(const nlohmann::json& obj, const char* key);

// Checks the request is about a modelops.dev ModelService; returns an error
// message when it is not.
std::string CheckModelServiceRequest(const nlohmann::json& request);

}  // namespace ms::webhook
