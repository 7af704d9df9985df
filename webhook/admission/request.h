// The members of an AdmissionReview's `request` that admission reads, typed,
// as controller-runtime's admission.Request is: read by the review parser
// (review_parser.h) in its one pass over the body, the last of a repeated
// key winning as nlohmann's parser keeps it. Its strings point into the
// parser's buffer.
#pragma once

#include <optional>
#include <string_view>

#include "shared/text/json_ref.h"

namespace ms::admission {

struct AdmissionRequest {
  // request.uid, .subResource, .name, .namespace, .operation: "" when
  // absent or not a string.
  std::string_view uid, sub_resource, name, namespace_, operation;
  // request.kind (a GroupVersionKind) and request.resource (a
  // GroupVersionResource) when they are objects; their members "" when
  // absent or not strings.
  struct GroupKind {
    std::string_view group, kind;
  };
  struct GroupResource {
    std::string_view group, resource;
  };
  std::optional<GroupKind> kind;
  std::optional<GroupResource> resource;
  // request.object and request.oldObject, in the parser's tree.
  std::optional<text::JsonRef> object, old_object;
};

}  // namespace ms::admission
