// The fast path for reading an AdmissionReview body: RapidJSON's SAX reader
// building the nlohmann::json tree the handlers take, several times faster
// than nlohmann's own lexer, and without the subtrees no handler reads.
//
// Kept: only what ServeReview, Preflight and the handlers read:
//   apiVersion, kind, request
//   request.{uid, kind, resource, subResource, name, namespace, operation,
//            object, oldObject}
//   request.object.{apiVersion, kind, metadata, spec, status} (status: the
//            schema checks it), request.object.metadata.{name, generateName}
//   request.oldObject.spec (for validation ratcheting, handler.h)
// Everything else (userInfo, options, requestKind, dryRun, the object's
// labels, annotations and managedFields, all of oldObject but its spec) is
// left out: usually the bulk of a review, and the tree's cost is per node,
// to build and to free.
//
// What is kept is the value nlohmann::json::parse gives, number types
// included (non-negative integers unsigned, negative ones signed, anything
// with a fraction or exponent or beyond 64 bits a double). When RapidJSON
// rejects the text, or a number is out of a double's range, the result is
// kFallback: the caller falls back to nlohmann::json::parse, which gives the
// error message users see. A test checks both directions on mutated bodies.
//
// Objects and arrays nested deeper than max_depth stop the parse (kTooDeep)
// before it recurses further.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string_view>

#include "base/utf8.h"  // IsValidUtf8: RFC 3629, as nlohmann's parser requires of strings

namespace ms::webhook {

struct FastParse {
  enum Status { kOk, kTooDeep, kFallback };
  Status status = kFallback;
  nlohmann::json value;  // the review when kOk
};

FastParse ParseReviewFast(std::string_view body, int max_depth);

}  // namespace ms::webhook
