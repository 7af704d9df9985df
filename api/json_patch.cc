#include "api/json_patch.h"

namespace ms::jsonpatch {

std::string EscapeToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::string Pointer(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& t : tokens) {
    out += '/';
    out += EscapeToken(t);
  }
  return out;
}

void Patch::Add(std::string path, nlohmann::json value) {
  ops_.push_back({{"op", "add"}, {"path", std::move(path)}, {"value", std::move(value)}});
}

void Patch::Replace(std::string path, nlohmann::json value) {
  ops_.push_back({{"op", "replace"}, {"path", std::move(path)}, {"value", std::move(value)}});
}

void Patch::Remove(std::string path) { ops_.push_back({{"op", "remove"}, {"path", std::move(path)}}); }

}  // namespace ms::jsonpatch
