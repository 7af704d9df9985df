#!/usr/bin/env python3
"""Checks the size limits of the production code.

Usage: tools/check-size.py [--list] [FILE ...]
  (default: every tracked .cc and .h under shared/, webhook/ and controller/
  but the generated *.gen.* files)

A production file may have at most 450 lines; a production function at most
60, counted as clang-tidy's readability-function-size counts them with
LineThreshold 60: the line of the body's closing brace minus the line of its
opening brace. Functions are found from the tokens, not compiled: comments,
string and character literals (raw strings included) and preprocessor lines
are dropped first; then every `{` at namespace or class scope is a namespace
or class body, an initializer (an `=` at the top level of the declaration, a
name followed by a braced list, a brace in a constructor's member
initializers) or a function body (a declaration with a parameter list; a
lambda in a namespace-scope initializer counts as a function of its own).
Everything inside a function body, lambdas included, counts towards it.
The rules were checked against clang-tidy's on every production file; the
script runs in well under a second, clang-tidy in minutes.

Before checking, the script checks itself on known examples and stops with
status 2 if one gives the wrong answer. --list prints every function with its
length, longest first.

Exit status: 0 within the limits, 1 some file or function is over (one line
each: FILE:LINE: ...), 2 the self-test failed or a file cannot be read.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_FILE_LINES = 450
MAX_FUNCTION_LINES = 60
FOLDERS = ("shared", "webhook", "controller")

TOKEN = re.compile(
    r"""(?P<ws>\s+)
      | (?P<id>[A-Za-z_]\w*)
      | (?P<num>\.?\d(?:[\w.']|[eEpP][+-])*)
      | (?P<punct><=>|<<=|>>=|->\*?|::|\.\.\.|[-+*/%&|^!=<>]=|&&|\|\||\+\+|--|<<|>>|.)""",
    re.X | re.S,
)
QUALIFIERS = {"const", "noexcept", "override", "final", "mutable", "constexpr", "volatile", "&", "&&"}


def strip(text):
    """The text with comments, literals and preprocessor lines blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            j = i
            while j < n and text[j] != "\n":
                if text.startswith("\\\n", j):
                    j += 1
                elif text.startswith("/*", j):  # a comment may continue a directive's line
                    end = text.find("*/", j + 2)
                    j = n - 1 if end < 0 else end + 1
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "\n":
            at_line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c == '"' and re.search(r"(?:^|[^\w])(?:u8|u|U|L)?R$", text[max(0, i - 3) : i]):
            m = re.match(r'"([^()\\\s]{0,16})\(', text[i:])
            if not m:
                raise ValueError("unterminated raw string")
            end = text.find(")" + m.group(1) + '"', i)
            if end < 0:
                raise ValueError("unterminated raw string")
            j = end + len(m.group(1)) + 2
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1 : j - 1]) + '"')
            i = j
            continue
        elif c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):  # 1'000 is a number
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1 : j - 1]) + c)
            i = j
            continue
        else:
            out.append(c)
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    return "".join(out)


def tokens(text):
    line = 1
    for m in TOKEN.finditer(strip(text)):
        if m.lastgroup != "ws":
            yield m.group(), line
        line += m.group().count("\n")


def top_level(stmt):
    """The tokens of a declaration outside parentheses, brackets and braces
    (the outermost brackets themselves kept)."""
    depth = 0
    for tok in stmt:
        if tok in ("(", "[", "{"):
            depth += 1
            if depth == 1:
                yield tok
        elif tok in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                yield tok
        elif depth == 0:
            yield tok


def without_template_heads(stmt):
    """The declaration without its leading `template <...>` heads."""
    while len(stmt) > 1 and stmt[0] == "template" and stmt[1] == "<":
        depth, k = 0, 1
        while k < len(stmt):
            depth += {"<": 1, ">": -1, ">>": -2}.get(stmt[k], 0)
            k += 1
            if depth <= 0:
                break
        stmt = stmt[k:]
    return stmt


def matching_open(toks, close):
    """The index of the bracket that the bracket at toks[close] closes, or -1."""
    pair = {")": "(", "]": "["}[toks[close]]
    depth = 0
    for k in range(close, -1, -1):
        if toks[k] == toks[close]:
            depth += 1
        elif toks[k] == pair:
            depth -= 1
            if depth == 0:
                return k
    return -1


def lambda_header(toks):
    """Whether toks end with a lambda's introducer and parameters: `[..]`,
    `[..](..)`, then qualifiers or a trailing return type."""
    k = len(toks) - 1
    arrow = max((j for j, t in enumerate(toks) if t == "->"), default=-1)
    if arrow >= 0 and ")" in toks[arrow - 1 : arrow] + [t for t in toks[arrow - 1 : arrow] if t in QUALIFIERS]:
        k = arrow - 1
    while k >= 0 and toks[k] in QUALIFIERS:
        k -= 1
    if k >= 0 and toks[k] == ")":
        k = matching_open(toks, k) - 1
        while k >= 0 and toks[k] in QUALIFIERS:
            k -= 1
    if k < 0 or toks[k] != "]":
        return False
    opening = matching_open(toks, k)
    return opening == 0 or (opening > 0 and toks[opening - 1] in ("=", "(", ",", "{", "return", "[", "?", ":"))


def classify(stmt, in_parens):
    """What a `{` at namespace or class scope opens: 'lambda', 'scope', 'init'
    or 'function'."""
    if lambda_header(stmt):
        return "lambda"
    if in_parens:
        return "init"
    stmt = without_template_heads(stmt)
    if not stmt or stmt[0] in ("namespace", "extern"):
        return "scope"
    top = list(top_level(stmt))
    if any(t == "=" and (k == 0 or top[k - 1] != "operator") for k, t in enumerate(top)):
        return "init"
    head = top[: top.index("(")] if "(" in top else top
    if "enum" in head:
        return "init"
    if any(t in ("class", "struct", "union") for t in head):
        return "scope"
    if "(" not in top:
        return "init"
    # A constructor's member initializers: `) : a_{x}, b_(y) {`: a brace after
    # a name is one member's initializer, a brace after `)` or `}` the body.
    colon = any(t == ":" and k > 0 and (top[k - 1] == ")" or top[k - 1] in QUALIFIERS) for k, t in enumerate(top))
    if colon and stmt[-1] not in (")", "}") and stmt[-1] not in QUALIFIERS:
        return "init"
    return "function"


def function_name(stmt):
    stmt = without_template_heads(stmt)
    if lambda_header(stmt):
        return "lambda"
    if "operator" in stmt:
        k = stmt.index("operator")
        end = stmt.index("(", k + 2) if stmt[k + 1] == "(" else stmt.index("(", k)
        start = k - 2 if k >= 2 and stmt[k - 1] == "::" else k
        return "".join(stmt[start:end])
    angles = 0
    for k, tok in enumerate(stmt):
        if tok == "(" and angles <= 0:
            start = k - 1
            while start >= 2 and stmt[start - 1] == "::":
                start -= 2
            if start > 0 and stmt[start - 1] == "~":
                start -= 1
            return "".join(stmt[max(start, 0) : k]) or "?"
        angles += {"<": 1, ">": -1, ">>": -2}.get(tok, 0)
    return "?"


def functions(text):
    """(name, line of the opening brace, lines) of each function body in a
    C++ source, lines counted as clang-tidy counts them."""
    found = []
    # Each frame: kind ('scope', 'init' or 'function'), the tokens since its
    # opening or its declaration's start, the open parentheses among them,
    # and for a function its name, opening line and depth of nested braces.
    frames = [{"kind": "scope", "toks": [], "parens": 0}]
    for tok, line in tokens(text):
        top = frames[-1]
        if top["kind"] == "function":
            if tok == "{":
                top["depth"] += 1
            elif tok == "}":
                top["depth"] -= 1
                if top["depth"] == 0:
                    frames.pop()
                    found.append((top["name"], top["line"], line - top["line"]))
                    parent = frames[-1]
                    if top["name"] == "lambda" or parent["kind"] == "init":
                        parent["toks"] += ["{", "}"]
                    else:
                        parent["toks"], parent["parens"] = [], 0
            continue
        if tok == "{":
            what = classify(top["toks"], top["parens"] > 0) if top["kind"] == "scope" else (
                "lambda" if lambda_header(top["toks"]) else "init")
            if what in ("function", "lambda"):
                name = "lambda" if what == "lambda" else function_name(top["toks"])
                frames.append({"kind": "function", "name": name, "line": line, "depth": 1})
            else:
                frames.append({"kind": what, "toks": [], "parens": 0})
            continue
        if tok == "}":
            if len(frames) == 1:
                raise ValueError(f"line {line}: unbalanced braces")
            closed = frames.pop()
            parent = frames[-1]
            if closed["kind"] == "init":
                parent["toks"] += ["{", "}"]
            else:
                parent["toks"], parent["parens"] = [], 0
            continue
        if top["kind"] == "scope":
            if tok == ";" and top["parens"] == 0:
                top["toks"] = []
                continue
            if tok == ":" and top["toks"] in (["public"], ["private"], ["protected"]):
                top["toks"] = []
                continue
        if tok == "(":
            top["parens"] += 1
        elif tok == ")":
            top["parens"] -= 1
        top["toks"].append(tok)
    if len(frames) != 1:
        raise ValueError("unbalanced braces")
    return found


SELF_TEST = r"""
namespace ms {
namespace {
constexpr int kLimit = 3;
const std::map<std::string, int> kTable = {{"a{", 1}, {"b", 2}};
const auto kSquare = [](int x) -> int {
  return x * x;
};
}  // namespace
// a comment with { braces
#define MACRO(x) \
  { x }
template <typename T, typename = std::enable_if_t<true>>
T Twice(T t) {
  const char* raw = R"x({ "(" )x";
  char c = '{';
  int n = 1'000;
  auto f = [&] { return t + t; };
  return f();
}
class Widget : public Base {
 public:
  Widget(int a) : a_{a}, b_(a) {
    if (a > 0) {
      b_ = 2;
    }
  }
  int Get() const noexcept { return a_; }
  bool operator==(const Widget& o) const = default;
  Widget& operator=(const Widget& o) {
    a_ = o.a_;
    return *this;
  }
 private:
  int a_{0};
  int b_ = 1;
  std::function<void()> callback_ = [] {
  };
};
enum class Color : int { kRed = 1, kBlue };
}  // namespace ms
void Outside(std::vector<int> v = {}) {
}
"""
SELF_TEST_EXPECTED = [
    ("lambda", 6, 2),
    ("Twice", 14, 6),
    ("Widget", 23, 4),
    ("Get", 28, 0),
    ("operator=", 30, 3),
    ("lambda", 37, 1),
    ("Outside", 42, 1),
]


def self_test():
    got = functions(SELF_TEST)
    if got != SELF_TEST_EXPECTED:
        print(f"check-size: self-test failed: {got} != {SELF_TEST_EXPECTED}", file=sys.stderr)
        sys.exit(2)


def production_files():
    out = subprocess.run(["git", "ls-files", "--", *FOLDERS], cwd=ROOT, capture_output=True, text=True, check=True)
    return [f for f in out.stdout.split() if f.endswith((".cc", ".h")) and ".gen." not in os.path.basename(f)]


def main(argv):
    self_test()
    listing = "--list" in argv
    files = [a for a in argv if a != "--list"] or production_files()
    problems, everything = [], []
    for path in files:
        try:
            with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                text = f.read()
            found = functions(text)
        except (OSError, UnicodeDecodeError, ValueError) as e:
            print(f"check-size: {path}: {e}", file=sys.stderr)
            return 2
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > MAX_FILE_LINES:
            problems.append(f"{path}:1: {lines} lines, more than {MAX_FILE_LINES}")
        for name, line, length in found:
            everything.append((length, path, line, name))
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{path}:{line}: function {name} has {length} lines, more than {MAX_FUNCTION_LINES}")
    if listing:
        for length, path, line, name in sorted(everything, reverse=True):
            print(f"{length:4d} {path}:{line}: {name}")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
