// Reading an AdmissionReview body in one pass of the JSON pull reader
// (shared/text/json_reader.h) over a padded copy of it, decoded in place:
// the review's own members and the request's (request.h) typed, the
// request's object read as a ModelService into its typed spec by the
// generated parser (api::ReadModelService, shared/api/spec.h) as it comes,
// and the object's and oldObject's JSON text as sent (the object's from a
// copy of the rest of the body taken before it is decoded).
//
// Read: only what ServeReview, Preflight and the handlers read:
//   apiVersion, kind, request
//   request.{uid, kind.{group, kind}, resource.{group, resource},
//            subResource, name, namespace, operation, object, oldObject}
//   of request.object and request.oldObject, besides their text:
//            {apiVersion, kind, spec, metadata.{name, generateName}}, each
//            as its text
// Everything else (userInfo, options, requestKind, dryRun, the object's
// labels, annotations, managedFields and status) is checked and skipped:
// usually the bulk of a review. No tree is built.
//
// What is read is what nlohmann::json::parse gives (the last of a repeated
// key).
// It takes exactly the texts nlohmann's parser takes (a leading UTF-8 byte
// order mark skipped, surrogate pairs decoded; a number out of a double's
// range refused), a NUL byte aside: the result is kInvalid for the others,
// and the caller asks nlohmann's parser only for the words of its error
// (the message users see), never for a tree. A test checks both directions
// on mutated bodies, and the fuzz target on its corpus.
//
// Objects and arrays nested deeper than max_depth stop the parse (kTooDeep)
// before it recurses further.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "webhook/admission/request.h"

namespace ms::admission {

struct ParsedReview {
  enum Status { kOk, kTooDeep, kInvalid };
  Status status = kInvalid;

  // When kOk: whether the body is a JSON object; its apiVersion and kind
  // when they are strings; its request when that is an object.
  bool is_object = false;
  std::optional<std::string_view> api_version, kind;
  std::optional<AdmissionRequest> request;

  // What was read, as JSON (for tests): null when the body is not an
  // object, else its apiVersion and kind when strings and its request
  // when an object, with every member of AdmissionRequest ("" for a string
  // that is absent; kind and resource only when objects; object and
  // oldObject as {"json", "isObject", and each member read, parsed}).
  nlohmann::json View() const;

  // The strings point into the padded copy of the body (decoded in place),
  // which lives here.
  struct Pool {
    static constexpr size_t kPadding = 16, kSmall = 8192;
    char small[kSmall];       // the padded copy of a usual review (a few kB)
    std::vector<char> large;  // ... or of a larger one
    // The text from request.object on, copied before the object is read
    // (decoded in place): the object's text as sent.
    char object_small[kSmall];
    std::vector<char> object_large;
  };
  // Default-initialized: the buffers are written before they are read.
  std::unique_ptr<Pool> pool = std::make_unique_for_overwrite<Pool>();
};

ParsedReview ParseReview(std::string_view body, int max_depth);

}  // namespace ms::admission
