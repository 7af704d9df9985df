// POST /validate: the typed spec's errors, the cross-field rules and the warnings; for
// the scale subresource (an autoscaling/v1 Scale), the rule of spec.replicas.
#pragma once

#include "webhook/admission/handler.h"

namespace ms::admission {

class ValidatingHandler final : public Handler {
 public:
  AdmissionResponse Handle(const AdmissionRequest& request) const override;
  const std::string& path() const override { return path_; }

 private:
  std::string path_ = "/validate";
};

}  // namespace ms::admission
