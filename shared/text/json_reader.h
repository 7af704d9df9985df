// A pull reader of one JSON text: the caller asks for the kind of the next
// value and reads it, enters an object and takes its members' keys one by
// one, enters an array and takes its items, or skips a value (checked, not
// decoded). It takes exactly the texts nlohmann's parser takes (the
// scanner's grammar, json_scanner.h, and numbers typed and range-checked by
// nlohmann's rules, json_number.h), so a caller that reads every value
// builds what nlohmann::json::parse would (the review parser's tree,
// webhook/admission/review_parser.h; the unit test compares the two).
//
// An object's members come as the text has them: a repeated key comes once
// per occurrence, and order is the text's. Containers nested deeper than
// max_depth stop the read (too_deep()) before it goes further.
//
// Every call returns false when the text is not JSON there (or is nested too
// deep); NextKey and NextItem also return false at the end of their
// container, which ok() tells apart. After a failure the reader is spent.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "shared/text/json_number.h"
#include "shared/text/json_scanner.h"

namespace ms::text {

// A JSON text to read: its bytes, told apart from a string value (an
// std::string converts to nlohmann::json too).
struct JsonText {
  std::string_view bytes;
};

class JsonReader {
 public:
  enum class Kind : uint8_t { kNull, kBool, kNumber, kString, kObject, kArray, kNone };
  static constexpr size_t kPadding = JsonScanner::kPadding;

  // `text`: `size` bytes followed by kPadding NUL bytes, rewritten in place
  // (strings are decoded where they are).
  JsonReader(char* text, size_t size, int max_depth) : in_(text, size), max_depth_(max_depth) {}

  // The kind of the next value (kNone: no value starts there).
  Kind Peek();

  bool String(std::string_view& out);  // decoded, valid UTF-8, NUL-terminated in the buffer
  bool Bool(bool& out);
  bool Null();
  // The number as nlohmann's parser types it (json_number.h): an unsigned
  // or signed integer, or a double.
  bool Number(TypedNumber& out);

  // At an object: enters it. Then NextKey gives each member's key (decoded),
  // after which the caller reads or skips the member's value, until NextKey
  // returns false at the object's end.
  bool BeginObject();
  bool NextKey(std::string_view& key);
  // As NextKey, leaving the buffer as it was: the key's text as written
  // (escapes undecoded), for a value whose text the caller keeps
  // (RawKeyEquals compares it with a name).
  bool NextRawKey(std::string_view& raw_key);
  // At an array: enters it. Then NextItem returns true before each item,
  // which the caller reads or skips, and false at the array's end.
  bool BeginArray();
  bool NextItem();

  // Any value, checked and not decoded.
  bool Skip();
  // Any value, checked and not decoded: its text as the buffer has it.
  bool Capture(std::string_view& raw);
  // Where the reader is (after the last value or token read).
  const char* Position() const { return in_.position(); }
  // Whether only whitespace is left.
  bool AtEnd() { return in_.AtEnd(); }

  bool ok() const { return !failed_; }
  bool too_deep() const { return too_deep_; }

 private:
  bool Fail() {
    failed_ = true;
    return false;
  }
  // The end of the container just read: its parent's next member or item
  // follows a ','.
  bool End() {
    --depth_;
    return false;
  }
  bool Enter(char open);
  // Past the ',' or '{' before an object's next member: true at its key's
  // '"', false at the object's end (consumed) or on an error.
  bool NextMember();

  JsonScanner in_;
  const int max_depth_;
  int depth_ = 0;      // containers open
  bool first_ = true;  // no member or item of the innermost container taken yet
  bool failed_ = false;
  bool too_deep_ = false;
};

// Inline: called for every value of a review.
// The kind of value each first byte starts.
inline constexpr auto kJsonKindOf = [] {
  std::array<JsonReader::Kind, 256> kinds{};
  kinds.fill(JsonReader::Kind::kNone);
  kinds['{'] = JsonReader::Kind::kObject;
  kinds['['] = JsonReader::Kind::kArray;
  kinds['"'] = JsonReader::Kind::kString;
  kinds['t'] = kinds['f'] = JsonReader::Kind::kBool;
  kinds['n'] = JsonReader::Kind::kNull;
  kinds['-'] = JsonReader::Kind::kNumber;
  for (char c = '0'; c <= '9'; ++c) kinds[static_cast<unsigned char>(c)] = JsonReader::Kind::kNumber;
  return kinds;
}();

inline JsonReader::Kind JsonReader::Peek() { return kJsonKindOf[static_cast<unsigned char>(in_.Peek())]; }

inline bool JsonReader::Enter(char open) {
  if (!in_.Consume(open)) return Fail();
  if (depth_ >= max_depth_) {
    too_deep_ = true;
    return Fail();
  }
  ++depth_;
  first_ = true;
  return true;
}

inline bool JsonReader::BeginObject() { return Enter('{'); }
inline bool JsonReader::BeginArray() { return Enter('['); }

inline bool JsonReader::NextMember() {
  if (failed_) return false;
  if (first_) {
    first_ = false;
    if (in_.Consume('}')) return End();
  } else if (!in_.Consume(',')) {
    return in_.Consume('}') ? End() : Fail();
  }
  return in_.Peek() == '"' || Fail();
}

inline bool JsonReader::NextKey(std::string_view& key) {
  return NextMember() && ((in_.String(key) && in_.Consume(':')) || Fail());
}

inline bool JsonReader::String(std::string_view& out) { return (in_.Peek() == '"' && in_.String(out)) || Fail(); }

inline bool JsonReader::Skip() { return in_.SkipValue(max_depth_ - depth_, too_deep_) || Fail(); }

inline bool JsonReader::NextRawKey(std::string_view& raw_key) {
  return NextMember() && ((in_.RawString(raw_key) && in_.Consume(':')) || Fail());
}

inline bool JsonReader::Capture(std::string_view& raw) {
  in_.Peek();
  const char* start = in_.position();
  if (!Skip()) return false;
  raw = std::string_view(start, static_cast<size_t>(in_.position() - start));
  return true;
}

inline bool JsonReader::NextItem() {
  if (failed_) return false;
  if (first_) {
    first_ = false;
    return !in_.Consume(']') || End();
  }
  if (in_.Consume(',')) return true;
  return in_.Consume(']') ? End() : Fail();
}

// Whether a key NextRawKey gave (escapes as written) is `name`.
bool RawKeyEquals(std::string_view raw_key, std::string_view name);

}  // namespace ms::text
