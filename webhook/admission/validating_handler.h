// POST /validate: the schema, the cross-field rules and the warnings; for
// the scale subresource (an autoscaling/v1 Scale), the rule of spec.replicas.
#pragma once

#include "shared/api/schema.h"
#include "webhook/admission/handler.h"

namespace ms::admission {

class ValidatingHandler final : public Handler {
 public:
  explicit ValidatingHandler(const api::SchemaValidator& schema) : schema_(schema) {}
  AdmissionResponse Handle(const AdmissionRequest& request) const override;
  const std::string& path() const override { return path_; }

 private:
  const api::SchemaValidator& schema_;
  std::string path_ = "/validate";
};

}  // namespace ms::admission
