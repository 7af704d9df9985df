// RFC 6902 JSON Patch building and RFC 6901 JSON Pointer escaping.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace ms::jsonpatch {

// Escapes one reference token: '~' -> "~0", '/' -> "~1".
std::string EscapeToken(std::string_view token);
// Joins tokens into a pointer: {"spec","a/b"} -> "/spec/a~1b".
std::string Pointer(const std::vector<std::string>& tokens);

class Patch {
 public:
  void Add(std::string path, nlohmann::json value);
  void Replace(std::string path, nlohmann::json value);
  void Remove(std::string path);
  bool empty() const { return ops_.empty(); }
  size_t size() const { return ops_.size(); }
  const nlohmann::json& ops() const { return ops_; }
  std::string Dump() const { return ops_.dump(); }

 private:
  nlohmann::json ops_ = nlohmann::json::array();
};

}  // namespace ms::jsonpatch
