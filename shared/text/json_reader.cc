#include "shared/text/json_reader.h"

#include <nlohmann/json.hpp>
#include <string>

namespace ms::text {

bool JsonReader::Bool(bool& out) {
  switch (in_.Peek()) {
    case 't':
      out = true;
      return in_.Literal("true") || Fail();
    case 'f':
      out = false;
      return in_.Literal("false") || Fail();
    default:
      return Fail();
  }
}

bool JsonReader::Null() { return (in_.Peek() == 'n' && in_.Literal("null")) || Fail(); }

bool JsonReader::Number(TypedNumber& out) {
  std::string_view token;
  if (Peek() != Kind::kNumber || !in_.Number(token)) return Fail();
  auto v = ReadJsonNumber(token);
  if (!v) return Fail();  // beyond a double's range, an error to nlohmann too
  out = *v;
  return true;
}

bool RawKeyEquals(std::string_view raw_key, std::string_view name) {
  if (raw_key.find('\\') == std::string_view::npos) return raw_key == name;
  // Escaped (rare): decoded by nlohmann's parser, the text checked already.
  const auto decoded = nlohmann::json::parse("\"" + std::string(raw_key) + "\"", nullptr, false);
  return decoded.is_string() && decoded.get_ref<const std::string&>() == name;
}

}  // namespace ms::text
