// The members of an AdmissionReview's `request` that admission reads (those
// the review parser keeps, review_parser.h), found in one pass over the
// request's members: a typed view of the request, as controller-runtime's
// admission.Request is, so that a handler does not search the request once
// per field it reads.
#pragma once

#include <optional>
#include <string_view>

#include "base/json_ref.h"

namespace ms::webhook {

struct AdmissionRequest {
  // `request` in either tree (ServeReview passes RapidJSON's; tests may pass
  // nlohmann's); of a repeated key the last, as nlohmann's parser keeps it.
  explicit AdmissionRequest(JsonRef request);

  std::optional<JsonRef> uid, kind, resource, sub_resource, name, namespace_, operation, object, old_object;
};

// The text of `member` when it is a string, else "".
inline std::string_view Text(const std::optional<JsonRef>& member) {
  return member && member->is_string() ? member->str() : std::string_view();
}

}  // namespace ms::webhook
