#include "webhook/admission/review_parser.h"

#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>

#include "shared/text/json_number.h"
#include "shared/text/json_ref.h"
#include "webhook/admission/json_scanner.h"

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
// its SAX interface) from the scanner's tokens; skips the rest with
// JsonScanner::SkipValue, which checks it without decoding it.
class TreeBuilder {
 public:
  TreeBuilder(JsonScanner& in, rapidjson::Document& doc, int max_depth) : in_(in), doc_(doc), max_depth_(max_depth) {}
  bool too_deep() const { return too_deep_; }

  // The whole text: one value and nothing after it.
  bool Parse() { return Value(Node::kRoot, 0) && in_.AtEnd(); }

 private:
  // A value at `node` (an object's place in the review) with `depth`
  // containers open around it.
  bool Value(Node node, int depth) {
    switch (in_.Peek()) {
      case '{':
        return Open(depth) && Object(node, depth + 1);
      case '[':
        return Open(depth) && Array(depth + 1);
      case '"': {
        std::string_view s;
        return in_.String(s) && doc_.String(s.data(), static_cast<rapidjson::SizeType>(s.size()), false);
      }
      case 't':
        return in_.Literal("true") && doc_.Bool(true);
      case 'f':
        return in_.Literal("false") && doc_.Bool(false);
      case 'n':
        return in_.Literal("null") && doc_.Null();
      default:
        return Number();
    }
  }

  // Typed by nlohmann's rules (json_number.h): a number beyond a double
  // stops the parse.
  bool Number() {
    std::string_view text;
    if (!in_.Number(text)) return false;
    auto v = text::JsonNumber(text);
    if (!v) return false;
    if (v->is_number_unsigned()) return doc_.Uint64(v->get<uint64_t>());
    if (v->is_number_integer()) return doc_.Int64(v->get<int64_t>());
    return doc_.Double(v->get<double>());
  }

  // Whether one more container may open inside `depth` open ones.
  bool Open(int depth) {
    if (depth < max_depth_) return true;
    too_deep_ = true;
    return false;
  }

  bool Object(Node node, int depth) {
    in_.Consume('{');
    doc_.StartObject();
    rapidjson::SizeType kept = 0;  // repeated keys are all kept: JsonRef reads the last
    if (!in_.Consume('}')) {
      do {
        std::string_view key;
        if (in_.Peek() != '"' || !in_.String(key) || !in_.Consume(':')) return false;
        if (!Kept(node, key)) {
          if (!in_.SkipValue(max_depth_ - depth, too_deep_)) return false;
          continue;
        }
        ++kept;
        if (!doc_.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()), false) ||
            !Value(Child(node, key), depth))
          return false;
      } while (in_.Consume(','));
      if (!in_.Consume('}')) return false;
    }
    return doc_.EndObject(kept);
  }

  bool Array(int depth) {
    in_.Consume('[');
    doc_.StartArray();
    rapidjson::SizeType count = 0;
    if (!in_.Consume(']')) {
      do {
        ++count;
        if (!Value(Node::kOther, depth)) return false;
      } while (in_.Consume(','));
      if (!in_.Consume(']')) return false;
    }
    return doc_.EndArray(count);
  }

  // Where the member `key` of an object at `node` sits.
  static Node Child(Node node, std::string_view key) {
    if (node == Node::kRoot && key == "request") return Node::kRequest;
    if (node == Node::kRequest && key == "object") return Node::kObject;
    if (node == Node::kRequest && key == "oldObject") return Node::kOldObject;
    if (node == Node::kObject && key == "metadata") return Node::kMetadata;
    return Node::kOther;
  }

  JsonScanner& in_;
  rapidjson::Document& doc_;
  const int max_depth_;
  bool too_deep_ = false;
};
}  // namespace

static_assert(FastParse::Pool::kPadding >= JsonScanner::kPadding);

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
  JsonScanner scanner(text, body.size());
  rapidjson::Document& doc = result.tree->doc;
  TreeBuilder builder(scanner, doc, max_depth);
  bool parsed = false;
  auto generate = [&](rapidjson::Document&) { return parsed = builder.Parse(); };
  doc.Populate(generate);
  if (builder.too_deep()) {
    result.status = FastParse::kTooDeep;
  } else if (parsed) {
    result.status = FastParse::kOk;
  }
  if (result.status != FastParse::kOk) doc.SetNull();
  return result;
}

nlohmann::json FastParse::Tree() const { return text::JsonRef(tree->doc).ToJson(); }

}  // namespace ms::admission
