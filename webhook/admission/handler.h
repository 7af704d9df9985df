// The admission Handler interface, as controller-runtime's admission.Handler:
// a pure function from an AdmissionRequest (the `request` object of an
// admission.k8s.io/v1 AdmissionReview, request.h) to an AdmissionResponse
// (the `response` object, without `uid`, which the caller echoes).
#pragma once

#include <optional>
#include <string>

#include "webhook/admission/request.h"
#include "webhook/admission/response.h"

namespace ms::admission {

class Handler {
 public:
  virtual ~Handler() = default;
  virtual AdmissionResponse Handle(const AdmissionRequest& request) const = 0;
  // "/validate" or "/mutate": the metrics' `webhook` label.
  virtual const std::string& path() const = 0;
};

// The checks both handlers make first: DELETE and CONNECT are allowed
// untouched; a request about another kind, or without an object, is denied
// with 400; a ratcheted UPDATE (below) is allowed untouched. Returns the
// response to give, or nullopt to go on.
std::optional<AdmissionResponse> Preflight(const AdmissionRequest& request);

// Validation ratcheting, as the API server ratchets a CRD's schema (unchanged
// values only): an UPDATE whose spec is the spec of oldObject (a finalizer
// removed, labels, annotations or owner references edited) is neither
// validated nor defaulted, so removing the controller's finalizer never
// depends on rules tightened after the object was stored. The webhook
// configurations' matchConditions skip the same requests before they are
// sent. A changed spec is validated, also while the object is being deleted,
// and reports only the errors about values that changed
// (api/ratchet.h: ValidatingHandler); it is defaulted as on a CREATE.
bool IsRatchetedUpdate(const AdmissionRequest& request);

// Whether the request is an UPDATE with an oldObject that is an object.
bool IsUpdateOf(const AdmissionRequest& request);

// Checks the request is about a modelops.dev ModelService, or about its scale
// subresource (an autoscaling/v1 Scale); returns an error message when it is
// not.
std::string CheckModelServiceRequest(const AdmissionRequest& request);

// Whether the request is about the scale subresource of a ModelService (the
// object is then an autoscaling/v1 Scale, not the ModelService).
bool IsScaleRequest(const AdmissionRequest& request);

}  // namespace ms::admission
