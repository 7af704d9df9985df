// A field error in the Kubernetes API server's wording
// (k8s.io/apimachinery/pkg/util/validation/field): "<path>: <kind>: <detail>".
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ms::api {

struct FieldError {
  enum class Type { kRequired, kInvalid, kUnsupported, kForbidden, kTooLong, kTooMany, kDuplicate };
  Type type = Type::kInvalid;
  std::string path;    // e.g. spec.strategy.rollingUpdate.maxSurge
  std::string value;   // the offending value rendered as JSON (Invalid/Unsupported)
  std::string detail;  // e.g. "must be between 1 and 100"
  // What the rule read, when not just the value at `path`: an UPDATE
  // reports the error only when one of these values changed (ratchet.h).
  // `reads`: the paths of the values a rule between fields reads (static
  // strings: nothing is allocated for them); `entry`: the key of the entry
  // of the map at `path` that a key's or value's error reported on the map
  // is about.
  std::span<const std::string_view> reads;
  std::optional<std::string> entry;

  // This error, reading `paths` (see `reads`), or about the map entry `key`.
  FieldError&& Reading(std::span<const std::string_view> paths) && {
    reads = paths;
    return std::move(*this);
  }
  FieldError&& OfEntry(std::string key) && {
    entry = std::move(key);
    return std::move(*this);
  }

  std::string ToString() const;
  void AppendTo(std::string& out) const;  // ToString() appended to `out`

  static FieldError Required(std::string path, std::string detail = {});
  // The value as JSON, or anything nlohmann::json is made of.
  static FieldError Invalid(std::string path, const nlohmann::json& value, std::string detail);
  static FieldError Unsupported(std::string path, const nlohmann::json& value,
                                const std::vector<std::string>& supported);
  static FieldError Forbidden(std::string path, std::string detail);
  static FieldError TooLong(std::string path, size_t max_bytes);
  // maxItems and maxProperties alike: "Too many: 70: must have at most 64 items".
  static FieldError TooMany(std::string path, size_t actual, size_t max_items);
  static FieldError Duplicate(std::string path, const nlohmann::json& value);
};

// Renders a value as the API server does in "Invalid value: ..." (JSON; long
// values are cut at 128 bytes with "...").
std::string RenderValue(const nlohmann::json& value);

// A denial's message lists at most kMaxListedErrors errors, each at most
// kMaxErrorBytes (CutText below), then "... and N more errors": however many
// errors a review has, its answer and its log line stay a few KiB. The
// bound is this API's (the API server lists every error of its own
// validation, whose lists and maps the CRD bounds): 16 errors, as the API
// server keeps at most 16 warnings of 256 runes in its 4 KiB of warnings
// (design.md §2; docs/user/admission.md).
inline constexpr size_t kMaxListedErrors = 16;
inline constexpr size_t kMaxErrorBytes = 1024;

// The errors joined with "; " as a denial's message, bounded as above (all
// of them, whole, when they are few and short, as every denial of a sane
// object is). Linear in the number of errors.
std::string JoinErrors(const std::vector<FieldError>& errors);

// `text` when it has at most `limit` bytes; else cut before a UTF-8
// character and "...[cut N bytes]" (N bytes left out) added, at most
// `limit` bytes in all.
std::string CutText(std::string text, size_t limit);

}  // namespace ms::api
