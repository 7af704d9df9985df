// The members of an AdmissionReview's `request` that admission reads, typed,
// as controller-runtime's admission.Request is: read by the review parser
// (review_parser.h) in its one pass over the body, the last of a repeated
// key winning as nlohmann's parser keeps it. Its strings point into the
// parser's buffer.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "shared/api/spec.h"

namespace ms::admission {

// request.object or request.oldObject: its JSON text as the body has it
// (for a Scale, ratcheting and an UPDATE's unchanged spec), and the members
// admission reads before its handler, each as its JSON text.
struct RequestObject {
  std::string_view json;
  bool is_object = false;
  std::optional<std::string_view> api_version, kind, spec;  // its members
  std::optional<std::string_view> name, generate_name;      // metadata's, when metadata is an object
};

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
  std::optional<RequestObject> object, old_object;
  // request.object read as a ModelService, in the same pass (the handlers'
  // input but for a Scale, which the validating handler reads from
  // object->json).
  std::optional<api::ParsedModelService> model_service;
};

// The string a member's JSON text (RequestObject) holds, or nothing when it
// is absent or not a string.
std::optional<std::string> JsonString(const std::optional<std::string_view>& json);
// A member's JSON text as nlohmann's dump() writes the value ("null" when
// absent), for messages.
std::string JsonDump(const std::optional<std::string_view>& json);

}  // namespace ms::admission
