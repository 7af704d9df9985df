// A JSON Patch (RFC 6902) of `add` operations written as text as they are
// found, byte for byte as nlohmann's dump() writes the same array
// ({"op":"add","path":...,"value":...}, members in key order). The paths
// are made of the definition's field names, which need no escaping in a
// JSON Pointer or a JSON string (tools/gen-api.py checks).
#pragma once

#include <string>
#include <string_view>

#include "shared/api/value_text.h"

namespace ms::api {

class AddPatchWriter {
 public:
  AddPatchWriter() { out_.reserve(512); }  // a usual patch, in one allocation

  // Adds `value` as the member `key` of the object at the current path.
  template <class T>
  void Add(std::string_view key, const T& value) {
    out_ += out_.empty() ? '[' : ',';
    out_ += R"({"op":"add","path":")";
    out_ += path_;
    out_ += '/';
    out_ += key;
    out_ += R"(","value":)";
    AppendJsonValue(out_, value);
    out_ += '}';
  }

  // The path descends into the member `key` for the Scope's lifetime.
  class Scope {
   public:
    Scope(AddPatchWriter& w, std::string_view key) : w_(w), size_(w.path_.size()) {
      w_.path_ += '/';
      w_.path_ += key;
    }
    ~Scope() { w_.path_.resize(size_); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    AddPatchWriter& w_;
    size_t size_;
  };

  // The patch's text: "" when no operation was added.
  std::string Finish() && {
    if (!out_.empty()) out_ += ']';
    return std::move(out_);
  }

 private:
  std::string path_;
  std::string out_;
};

}  // namespace ms::api
