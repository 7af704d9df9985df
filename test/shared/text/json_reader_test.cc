// JsonReader against nlohmann's parser: reading every value of a text gives
// nlohmann::json::parse's value (the last of a repeated key kept, as
// nlohmann keeps it), and the reader refuses exactly what nlohmann refuses.
#include "shared/text/json_reader.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace ms::text {
namespace {

using nlohmann::json;

bool ReadValue(JsonReader& in, json& out);

bool ReadObject(JsonReader& in, json& out) {
  if (!in.BeginObject()) return false;
  out = json::object();
  std::string_view key;
  while (in.NextKey(key)) {
    json v;
    const std::string k(key);  // the key's bytes are the buffer's: copied before the value is read
    if (!ReadValue(in, v)) return false;
    out[k] = std::move(v);
  }
  return in.ok();
}

bool ReadArray(JsonReader& in, json& out) {
  if (!in.BeginArray()) return false;
  out = json::array();
  while (in.NextItem()) {
    json v;
    if (!ReadValue(in, v)) return false;
    out.push_back(std::move(v));
  }
  return in.ok();
}

bool ReadValue(JsonReader& in, json& out) {
  switch (in.Peek()) {
    case JsonReader::Kind::kObject:
      return ReadObject(in, out);
    case JsonReader::Kind::kArray:
      return ReadArray(in, out);
    case JsonReader::Kind::kString: {
      std::string_view s;
      if (!in.String(s)) return false;
      out = std::string(s);
      return true;
    }
    case JsonReader::Kind::kBool: {
      bool b = false;
      if (!in.Bool(b)) return false;
      out = b;
      return true;
    }
    case JsonReader::Kind::kNull:
      out = nullptr;
      return in.Null();
    case JsonReader::Kind::kNumber: {
      TypedNumber n;
      if (!in.Number(n)) return false;
      out = n.type == TypedNumber::Type::kUnsigned  ? json(n.u)
            : n.type == TypedNumber::Type::kInteger ? json(n.i)
                                                    : json(n.d);
      return true;
    }
    case JsonReader::Kind::kNone:
      break;
  }
  return false;
}

// The value the reader reads from `text` (every value read, or every value
// skipped when `skip`), or nothing when it refuses the text.
std::optional<json> Read(const std::string& text, bool skip = false, int max_depth = 64) {
  std::vector<char> buf(text.begin(), text.end());
  buf.resize(text.size() + JsonReader::kPadding, '\0');
  JsonReader in(buf.data(), text.size(), max_depth);
  json v;
  const bool read = skip ? in.Skip() : ReadValue(in, v);
  if (!read || !in.AtEnd()) return std::nullopt;
  return v;
}

std::optional<json> Nlohmann(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

void Check(const std::string& text) {
  SCOPED_TRACE(text);
  const auto want = Nlohmann(text);
  const auto got = Read(text);
  ASSERT_EQ(got.has_value(), want.has_value());
  EXPECT_EQ(Read(text, /*skip=*/true).has_value(), want.has_value());
  if (!want) return;
  EXPECT_EQ(got->dump(), want->dump());
  EXPECT_EQ(*got, *want);
}

TEST(JsonReader, ReadsWhatNlohmannReads) {
  for (const char* text : {
           R"({})",
           R"([])",
           R"( { "a" : [ 1 , -2 , 3.5 , 1e2 , 18446744073709551615 , 18446744073709551616 , -9223372036854775808 ] } )",
           R"({"a":{"b":{"c":[[],[{}],{"d":null}]}},"e":true,"f":false,"g":"h"})",
           R"({"k":1,"k":2,"k":{"x":3}})",
           R"({"z":1,"a":2,"m":[3,{"b":4,"a":5}]})",
           R"("\u00e9\ud83d\ude00\n\"\\\/")",
           R"(["é", "\u0000"])",
           R"(0)",
           R"(-0.0)",
           R"(null)",
       })
    Check(text);
}

TEST(JsonReader, RefusesWhatNlohmannRefuses) {
  for (const char* text : {
           "",
           "{",
           "}",
           "[1,]",
           "[,1]",
           "{,}",
           R"({"a":1,})",
           R"({"a" 1})",
           R"({"a":1 "b":2})",
           R"({1:2})",
           "[1 2]",
           "01",
           "1.",
           "-",
           "1e400",
           "tru",
           "nul",
           R"("\ud83d")",
           R"("\x")",
           "\"\x01\"",
           "\"\xC3\"",
           "[1]]",
           "{} {}",
           "[\"a\"",
       })
    Check(text);
}

TEST(JsonReader, StopsAtMaxDepth) {
  const std::string deep = std::string(3, '[') + std::string(3, ']');
  EXPECT_TRUE(Read(deep, false, 3).has_value());
  EXPECT_TRUE(Read(deep, true, 3).has_value());
  for (bool skip : {false, true}) {
    std::vector<char> buf(deep.begin(), deep.end());
    buf.resize(deep.size() + JsonReader::kPadding, '\0');
    JsonReader in(buf.data(), deep.size(), 2);
    json v;
    EXPECT_FALSE(skip ? in.Skip() : ReadValue(in, v));
    EXPECT_TRUE(in.too_deep());
    EXPECT_FALSE(in.ok());
  }
}

TEST(JsonReader, SkipsAMemberAndReadsTheNext) {
  const std::string text = R"({"skip":{"a":[1,{"b":"\u00e9"}]},"keep":"v"})";
  std::vector<char> buf(text.begin(), text.end());
  buf.resize(text.size() + JsonReader::kPadding, '\0');
  JsonReader in(buf.data(), text.size(), 8);
  ASSERT_TRUE(in.BeginObject());
  std::string_view key, value;
  ASSERT_TRUE(in.NextKey(key));
  EXPECT_EQ(key, "skip");
  ASSERT_TRUE(in.Skip());
  ASSERT_TRUE(in.NextKey(key));
  EXPECT_EQ(key, "keep");
  ASSERT_TRUE(in.String(value));
  EXPECT_EQ(value, "v");
  EXPECT_FALSE(in.NextKey(key));
  EXPECT_TRUE(in.ok());
  EXPECT_TRUE(in.AtEnd());
}

TEST(JsonReader, AReadOfTheWrongKindFails) {
  const std::string text = R"({"a":1})";
  std::vector<char> buf(text.begin(), text.end());
  buf.resize(text.size() + JsonReader::kPadding, '\0');
  JsonReader in(buf.data(), text.size(), 8);
  std::string_view s;
  EXPECT_FALSE(in.String(s));
  EXPECT_FALSE(in.ok());
  std::string_view key;
  EXPECT_FALSE(in.NextKey(key));  // spent
}

// Every single-byte change of a few texts: the reader and nlohmann agree on
// each (taken or refused, and the value).
TEST(JsonReader, AgreesWithNlohmannOnMutations) {
  const std::string base = R"({"a":[1,-2.5e3,true,null,"s\u00e9\n"],"b":{"c":"d","c":{}},"e":18446744073709551615})";
  const std::string alphabet = "{}[],:\"\\0123456789-+.eEtrufalsn \x01\xC3\xA9u";
  int taken = 0;
  for (size_t i = 0; i < base.size(); ++i) {
    for (char c : alphabet) {
      std::string text = base;
      text[i] = c;
      Check(text);
      taken += Nlohmann(text).has_value();
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_GT(taken, 100);  // the mutations exercise reads, not only refusals
}

}  // namespace
}  // namespace ms::text
