#include "controller/autoscale/promql.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ms::autoscale {
namespace {

// A reference PromQL lexer for double-quoted literals, independent of the
// code under test: splits `q` into the text outside literals (with each
// literal replaced by "@") and the decoded literals (Go escapes \\ \" \n \r
// \t \xHH). Fails the test on anything unexpected.
struct Lexed {
  std::string skeleton;
  std::vector<std::string> literals;
};

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Lexed Lex(const std::string& q) {
  Lexed out;
  size_t i = 0;
  while (i < q.size()) {
    const char c = q[i];
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      ADD_FAILURE() << "raw control/non-ASCII byte in query at " << i << ": " << q;
    }
    if (c != '"') {
      out.skeleton.push_back(c);
      ++i;
      continue;
    }
    std::string lit;
    ++i;
    bool closed = false;
    while (i < q.size()) {
      char d = q[i];
      if (d == '"') {
        closed = true;
        ++i;
        break;
      }
      if (d == '\\') {
        if (i + 1 >= q.size()) break;
        char e = q[i + 1];
        switch (e) {
          case '\\':
            lit.push_back('\\');
            i += 2;
            continue;
          case '"':
            lit.push_back('"');
            i += 2;
            continue;
          case 'n':
            lit.push_back('\n');
            i += 2;
            continue;
          case 'r':
            lit.push_back('\r');
            i += 2;
            continue;
          case 't':
            lit.push_back('\t');
            i += 2;
            continue;
          case 'x':
            if (i + 3 < q.size() && Hex(q[i + 2]) >= 0 && Hex(q[i + 3]) >= 0) {
              lit.push_back(static_cast<char>(Hex(q[i + 2]) * 16 + Hex(q[i + 3])));
              i += 4;
              continue;
            }
            [[fallthrough]];
          default:
            ADD_FAILURE() << "bad escape in " << q;
            i += 2;
            continue;
        }
      }
      lit.push_back(d);
      ++i;
    }
    EXPECT_TRUE(closed) << "unterminated literal in " << q;
    out.skeleton += "@";
    out.literals.push_back(lit);
  }
  return out;
}

TEST(AutoscalePromQL, DefaultTemplate) {
  EXPECT_EQ(RenderQuery(kDefaultQueryTemplate, "prod", "bert-qa"),
            R"(sum(modelservice_queue_length{namespace="prod",modelservice="bert-qa"}))");
}

TEST(AutoscalePromQL, PodsIsTheRegexOfTheDeploymentsPodNames) {
  EXPECT_EQ(RenderQuery(kDefaultGpuQueryTemplate, "ml", "bert.qa"),
            R"(avg by (pod) (DCGM_FI_DEV_GPU_UTIL{namespace="ml",pod=~"bert\\.qa-[a-z0-9]+-[a-z0-9]+"}))");
  // Only after a regex matcher, and only the whole literal.
  EXPECT_EQ(RenderQuery(R"(x{pod="PODS",a=~"PODS-x"})", "ml", "b"), R"(x{pod="PODS",a=~"PODS-x"})");
}

TEST(AutoscalePromQL, QuoteBasics) {
  EXPECT_EQ(QuotePromQLString(""), R"("")");
  EXPECT_EQ(QuotePromQLString("abc-1.2"), R"("abc-1.2")");
  EXPECT_EQ(QuotePromQLString("a\"b"), R"("a\"b")");
  EXPECT_EQ(QuotePromQLString("a\\b"), R"("a\\b")");
  EXPECT_EQ(QuotePromQLString("a\nb\rc\td"), R"("a\nb\rc\td")");
  EXPECT_EQ(QuotePromQLString(std::string("a\0b", 3)), R"("a\x00b")");
  EXPECT_EQ(QuotePromQLString("\x7f\x01"), R"("\x7f\x01")");
  EXPECT_EQ(QuotePromQLString("\xc3\xa9"), R"("\xc3\xa9")");  // UTF-8 é, byte-exact
  EXPECT_EQ(QuotePromQLString("'`"), R"("'`")");
}

TEST(AutoscalePromQL, HostileNameCannotBreakOut) {
  const std::vector<std::string> hostile = {
      "x\"}) or vector(1000) #",   "x\\\"} or up{a=\"",   "a\\", "\\\\\"", "n}\nor vector(9)", "\"", "}",
      std::string("nul\0byte", 8), "name\r\n\t\"\\}{)(#",
  };
  for (const std::string& ns : {std::string("default"), std::string("ns\"}\\\n")}) {
    for (const std::string& name : hostile) {
      const std::string q = RenderQuery(kDefaultQueryTemplate, ns, name);
      const Lexed l = Lex(q);
      EXPECT_EQ(l.skeleton, "sum(modelservice_queue_length{namespace=@,modelservice=@})") << q;
      ASSERT_EQ(l.literals.size(), 2u) << q;
      EXPECT_EQ(l.literals[0], ns) << q;
      EXPECT_EQ(l.literals[1], name) << q;
      EXPECT_EQ(q.find('\n'), std::string::npos) << q;
    }
  }
}

TEST(AutoscalePromQL, OnlyWholeLiteralsAreSubstituted) {
  // Bare identifiers, longer literals, lower case and comments stay.
  EXPECT_EQ(RenderQuery(R"(NAME_total{a="NS-x",b="my NAME",c="ns",d="NS"} # "NAME")", "p", "q"),
            R"(NAME_total{a="NS-x",b="my NAME",c="ns",d="p"} # "NAME")");
  EXPECT_EQ(RenderQuery("sum(x{n=NAME})", "p", "q"), "sum(x{n=NAME})");
  // Single-quoted and raw placeholders are placeholders too (rendered as
  // double-quoted literals).
  EXPECT_EQ(RenderQuery("x{a='NS',b=`NAME`}", "p", "q\""), R"(x{a="p",b="q\""})");
  // Several occurrences; escaped quotes inside another literal are skipped
  // over correctly.
  EXPECT_EQ(RenderQuery(R"(a{l="\"NS\"",m="NS"} / b{m="NS",n="NAME"})", "p", "q"),
            R"(a{l="\"NS\"",m="p"} / b{m="p",n="q"})");
  // A comment's "NS" across lines: only the comment line is skipped.
  EXPECT_EQ(RenderQuery("# \"NS\"\nx{a=\"NS\"}", "p", "q"), "# \"NS\"\nx{a=\"p\"}");
  // Unterminated literal: copied as is.
  EXPECT_EQ(RenderQuery(R"(x{a="NS",b="NAME)", "p", "q"), R"(x{a="p",b="NAME)");
  // No placeholders at all.
  EXPECT_EQ(RenderQuery("vector(3)", "p", "q"), "vector(3)");
}

TEST(AutoscalePromQL, RegexMatchersGetRegexQuoting) {
  EXPECT_EQ(QuoteRegex(R"(a.b+c*?()|[]{}^$\z)"), R"(a\.b\+c\*\?\(\)\|\[\]\{\}\^\$\\z)");
  EXPECT_EQ(RenderQuery(R"(x{namespace=~"NS",name!~ "NAME",o="NAME"})", "a.b", "c.d"),
            R"(x{namespace=~"a\\.b",name!~ "c\\.d",o="c.d"})");
}

}  // namespace
}  // namespace ms::autoscale
