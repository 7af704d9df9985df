// AppendJsonString writes what nlohmann's dump() writes for the same string
// (compact, ensure_ascii off, invalid UTF-8 replaced): every byte alone, the
// escapes in context, multi-byte characters and broken sequences.
#include "shared/text/json_text.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace ms::text {
namespace {

std::string Nlohmann(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Ours(const std::string& s) {
  std::string out = "x";  // appended to, not replaced
  AppendJsonString(out, s);
  return out.substr(1);
}

TEST(JsonText, EveryByteAloneAsNlohmannWritesIt) {
  for (int b = 0; b < 256; ++b) {
    const std::string s(1, static_cast<char>(b));
    EXPECT_EQ(Ours(s), Nlohmann(s)) << "byte " << b;
  }
}

// Every byte to escape at every position of strings shorter and longer
// than one 16-byte block (the scan is 16 bytes at a time, and the last 1-15
// bytes one more block, copied when the string is shorter than 16 or
// overlapping the block before), and random mixes.
TEST(JsonText, EscapesAtEveryPositionOfLongStrings) {
  for (char special : {'"', '\\', '\n', '\x01', '\x1f', '\xc3'})
    for (size_t len : {1u, 2u, 7u, 14u, 15u, 16u, 17u, 31u, 32u, 33u, 47u})
      for (size_t at = 0; at < len; ++at) {
        std::string s(len, 'a');
        s[at] = special;
        ASSERT_EQ(Ours(s), Nlohmann(s)) << "byte " << int(special) << " at " << at << " of " << len;
      }
  std::mt19937 rng(27);
  const std::string alphabet = std::string("ab \"\\\t\x7f\x20\x1f\xc3\xa9") + '\0';
  for (int n = 0; n < 2000; ++n) {
    std::string s(rng() % 70, ' ');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    ASSERT_EQ(Ours(s), Nlohmann(s)) << nlohmann::json(s).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  }
}

TEST(JsonText, StringsAsNlohmannWritesThem) {
  const std::vector<std::string> cases = {"",
                                          "plain",
                                          "say \"hi\"",
                                          "back\\slash",
                                          "tab\there\nnew\rline\fform\bback",
                                          std::string("nul\0inside", 10),
                                          "\x01\x1f\x7f",
                                          "spec.replicas: Invalid value: \"x\": must be of type integer, not string",
                                          "\u00e9t\u00e9 \u4e2d\u6587 \U0001F600",
                                          "trailing\\",
                                          "\"",
                                          "a\xc3",             // a truncated sequence
                                          "\xff\xfe invalid",  // not UTF-8 at all
                                          "\xed\xa0\x80",      // an encoded surrogate
                                          "ok \xe2\x82\xac then \x80 stray"};
  for (const auto& s : cases) EXPECT_EQ(Ours(s), Nlohmann(s)) << s;
}

}  // namespace
}  // namespace ms::text
