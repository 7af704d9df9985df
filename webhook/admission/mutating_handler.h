// POST /mutate: the minimal JSON Patch of defaults (none for a Scale).
#pragma once

#include "webhook/admission/handler.h"

namespace ms::admission {

class MutatingHandler final : public Handler {
 public:
  AdmissionResponse Handle(const AdmissionRequest& request) const override;
  const std::string& path() const override { return path_; }

 private:
  std::string path_ = "/mutate";
};

}  // namespace ms::admission
