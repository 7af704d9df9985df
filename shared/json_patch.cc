#include "shared/json_patch.h"

#include <array>

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

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string Base64Encode(std::string_view data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    uint32_t n = (static_cast<unsigned char>(data[i]) << 16) | (static_cast<unsigned char>(data[i + 1]) << 8) |
                 static_cast<unsigned char>(data[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i + 1 == data.size()) {
    uint32_t n = static_cast<unsigned char>(data[i]) << 16;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == data.size()) {
    uint32_t n = (static_cast<unsigned char>(data[i]) << 16) | (static_cast<unsigned char>(data[i + 1]) << 8);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

bool Base64Decode(std::string_view in, std::string& out) {
  std::array<int, 256> table{};
  table.fill(-1);
  for (int i = 0; i < 64; ++i) table[static_cast<unsigned char>(kAlphabet[i])] = i;
  out.clear();
  uint32_t buf = 0;
  int bits = 0;
  size_t pad = 0;
  for (char c : in) {
    if (c == '=') {
      ++pad;
      continue;
    }
    if (pad) return false;  // data after padding
    int v = table[static_cast<unsigned char>(c)];
    if (v < 0) return false;
    buf = (buf << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buf >> bits) & 0xFF);
    }
  }
  return pad <= 2 && (in.size() % 4 == 0);
}

}  // namespace ms::jsonpatch
