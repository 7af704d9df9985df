// The members of an AdmissionReview's `request` that admission reads (those
// the review parser keeps, review_parser.h), found in one pass over the
// request's members: a typed view of the request, as controller-runtime's
// admission.Request is, so that a handler does not search the request once
// per field it reads.
#pragma once

#include <optional>
#include <string_view>

#include "shared/text/json_fields.h"  // Text(), for a member of the view
#include "shared/text/json_ref.h"

namespace ms::admission {

struct AdmissionRequest {
  // `request` in either tree (ServeReview passes RapidJSON's; tests may pass
  // nlohmann's); of a repeated key the last, as nlohmann's parser keeps it.
  explicit AdmissionRequest(text::JsonRef request);

  std::optional<text::JsonRef> uid, kind, resource, sub_resource, name, namespace_, operation, object, old_object;
};

}  // namespace ms::admission
