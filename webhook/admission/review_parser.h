// The fast path for reading an AdmissionReview body: a strict JSON pull
// reader (shared/text/json_reader.h) building a RapidJSON tree in a memory pool, which the handlers read
// through JsonRef (shared/text/json_ref.h), several times faster than nlohmann's
// parser and its tree, and without the subtrees no handler reads.
//
// Kept: only what ServeReview, Preflight and the handlers read:
//   apiVersion, kind, request
//   request.{uid, kind, resource, subResource, name, namespace, operation,
//            object, oldObject}
//   request.object.{apiVersion, kind, metadata, spec},
//            request.object.metadata.{name, generateName}
//   request.oldObject.{apiVersion, kind, spec} (for validation ratcheting,
//            handler.h and api/ratchet.h)
// Everything else (userInfo, options, requestKind, dryRun, the object's
// labels, annotations, managedFields and status, oldObject's metadata) is
// left out: usually the bulk of a review, and the tree's cost is per node,
// to build and to free.
//
// What is kept reads (through JsonRef) as the value nlohmann::json::parse
// gives, number types included (non-negative integers unsigned, negative
// ones signed, anything with a fraction or exponent or beyond 64 bits a
// double; numbers are typed by nlohmann's rules, shared/text/json_number.h).
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

#include <rapidjson/document.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

namespace ms::admission {

struct FastParse {
  enum Status { kOk, kTooDeep, kInvalid };
  Status status = kInvalid;
  // The review when kOk (a null value otherwise), in `tree`'s pool, its
  // objects' members as the body has them (JsonRef reads them in key order,
  // the last of a repeated key winning, as nlohmann would).
  const rapidjson::Value& value() const { return tree->doc; }
  // A copy as nlohmann::json (for tests).
  nlohmann::json Tree() const;

  // The tree's strings point into `text` (parsed in place): both live here.
  struct Pool {
    static constexpr size_t kPadding = 16, kSmall = 8192;
    char small[kSmall];                   // the padded copy of a usual review (a few kB)
    std::vector<char> large;              // ... or of a larger one
    alignas(8) char first_chunk[kSmall];  // holds a usual review's tree
    rapidjson::MemoryPoolAllocator<> allocator{first_chunk, sizeof first_chunk, 16 * 1024};
    rapidjson::Document doc{&allocator};
  };
  // Default-initialized: the buffers are written before they are read.
  std::unique_ptr<Pool> tree = std::make_unique_for_overwrite<Pool>();
};

FastParse ParseReviewFast(std::string_view body, int max_depth);

}  // namespace ms::admission
