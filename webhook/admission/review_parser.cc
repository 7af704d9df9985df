#include "webhook/admission/review_parser.h"

#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>

#include "shared/text/json_reader.h"
#include "shared/text/json_ref.h"

namespace ms::admission {

namespace {

// Where a container sits in the review, as far as skipping needs to know.
enum class Node { kRoot, kRequest, kObject, kOldObject, kMetadata, kOther };

bool OneOf(std::string_view key, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names)
    if (key == n) return true;
  return false;
}

// Whether the member `key` of a container at `node` is read by anyone (the
// list in review_parser.h).
bool Kept(Node node, std::string_view key) {
  switch (node) {
    case Node::kRoot:
      return OneOf(key, {"apiVersion", "kind", "request"});
    case Node::kRequest:
      return OneOf(key,
                   {"uid", "kind", "resource", "subResource", "name", "namespace", "operation", "object", "oldObject"});
    case Node::kObject:
      return OneOf(key, {"apiVersion", "kind", "metadata", "spec"});
    case Node::kOldObject:
      return OneOf(key, {"apiVersion", "kind", "spec"});  // what ratcheting compares
    case Node::kMetadata:
      return key == "name" || key == "generateName";
    case Node::kOther:
      return true;
  }
  return true;
}

// Builds the kept parts of the review into a rapidjson::Document (through
// its SAX interface) from the reader's values; skips the rest with
// JsonReader::Skip, which checks it without decoding it.
class TreeBuilder {
 public:
  TreeBuilder(text::JsonReader& in, rapidjson::Document& doc) : in_(in), doc_(doc) {}

  // The whole text: one value and nothing after it.
  bool Parse() { return Value(Node::kRoot) && in_.AtEnd(); }

 private:
  using Kind = text::JsonReader::Kind;

  // A value at `node` (an object's place in the review).
  bool Value(Node node) {
    switch (in_.Peek()) {
      case Kind::kObject:
        return Object(node);
      case Kind::kArray:
        return Array();
      case Kind::kString: {
        std::string_view s;
        return in_.String(s) && doc_.String(s.data(), static_cast<rapidjson::SizeType>(s.size()), false);
      }
      case Kind::kBool: {
        bool b = false;
        return in_.Bool(b) && doc_.Bool(b);
      }
      case Kind::kNull:
        return in_.Null() && doc_.Null();
      case Kind::kNumber:
        return Number();
      case Kind::kNone:
        break;
    }
    return false;
  }

  // Typed by nlohmann's rules (json_number.h).
  bool Number() {
    text::TypedNumber v;
    if (!in_.Number(v)) return false;
    switch (v.type) {
      case text::TypedNumber::Type::kUnsigned:
        return doc_.Uint64(v.u);
      case text::TypedNumber::Type::kInteger:
        return doc_.Int64(v.i);
      case text::TypedNumber::Type::kFloat:
        break;
    }
    return doc_.Double(v.d);
  }

  bool Object(Node node) {
    if (!in_.BeginObject()) return false;
    doc_.StartObject();
    rapidjson::SizeType kept = 0;  // repeated keys are all kept: JsonRef reads the last
    std::string_view key;
    while (in_.NextKey(key)) {
      if (!Kept(node, key)) {
        if (!in_.Skip()) return false;
        continue;
      }
      ++kept;
      if (!doc_.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()), false) || !Value(Child(node, key)))
        return false;
    }
    return in_.ok() && doc_.EndObject(kept);
  }

  bool Array() {
    if (!in_.BeginArray()) return false;
    doc_.StartArray();
    rapidjson::SizeType count = 0;
    while (in_.NextItem()) {
      ++count;
      if (!Value(Node::kOther)) return false;
    }
    return in_.ok() && doc_.EndArray(count);
  }

  // Where the member `key` of an object at `node` sits.
  static Node Child(Node node, std::string_view key) {
    if (node == Node::kRoot && key == "request") return Node::kRequest;
    if (node == Node::kRequest && key == "object") return Node::kObject;
    if (node == Node::kRequest && key == "oldObject") return Node::kOldObject;
    if (node == Node::kObject && key == "metadata") return Node::kMetadata;
    return Node::kOther;
  }

  text::JsonReader& in_;
  rapidjson::Document& doc_;
};
}  // namespace

static_assert(FastParse::Pool::kPadding >= text::JsonReader::kPadding);

FastParse ParseReviewFast(std::string_view body, int max_depth) {
  FastParse result;
  // A UTF-8 byte order mark before the text is skipped, as nlohmann's parser does.
  if (body.starts_with("\xEF\xBB\xBF")) body.remove_prefix(3);
  // A padded copy, parsed in place: the tree's strings point into it, and
  // the FastParse keeps it with the tree. A NUL byte inside the body ends
  // the scanner's text there, so such a body is invalid (ServeReview
  // refuses it).
  FastParse::Pool& pool = *result.tree;
  char* text = pool.small;
  if (body.size() + FastParse::Pool::kPadding > FastParse::Pool::kSmall) {
    pool.large.resize(body.size() + FastParse::Pool::kPadding);
    text = pool.large.data();
  }
  std::memcpy(text, body.data(), body.size());
  std::memset(text + body.size(), 0, FastParse::Pool::kPadding);
  text::JsonReader reader(text, body.size(), max_depth);
  rapidjson::Document& doc = result.tree->doc;
  TreeBuilder builder(reader, doc);
  bool parsed = false;
  auto generate = [&](rapidjson::Document&) { return parsed = builder.Parse(); };
  doc.Populate(generate);
  if (reader.too_deep()) {
    result.status = FastParse::kTooDeep;
  } else if (parsed) {
    result.status = FastParse::kOk;
  }
  if (result.status != FastParse::kOk) doc.SetNull();
  return result;
}

nlohmann::json FastParse::Tree() const { return text::JsonRef(tree->doc).ToJson(); }

}  // namespace ms::admission
