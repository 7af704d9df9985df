#include "shared/api/k8s_names.h"

#include <algorithm>
#include <initializer_list>

namespace ms::api {

namespace {

constexpr size_t kQualifiedNameMaxLength = 63;
constexpr size_t kLabelValueMaxLength = 63;
constexpr size_t kDns1123SubdomainMaxLength = 253;

constexpr const char* kQualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr const char* kQualifiedNameMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
constexpr const char* kLabelValueMsg =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character";
constexpr const char* kDns1123SubdomainFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr const char* kDns1123SubdomainMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and "
    "end with an alphanumeric character";
constexpr size_t kDns1123LabelMaxLength = 63;
constexpr const char* kDns1123LabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
constexpr const char* kDns1123LabelMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character";
constexpr const char* kConfigMapKeyFmt = "[-._a-zA-Z0-9]+";
constexpr const char* kConfigMapKeyMsg = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";

bool IsAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// validation.RegexError: "MSG (e.g. 'A',  or 'B', regex used for validation is 'FMT')".
std::string RegexError(std::string msg, const char* fmt, std::initializer_list<const char*> examples) {
  msg += " (e.g. ";
  bool first = true;
  for (const char* e : examples) {
    if (!first) msg += " or ";
    first = false;
    msg += std::string("'") + e + "', ";
  }
  return msg + "regex used for validation is '" + fmt + "')";
}

std::string MaxLenError(size_t n) { return "must be no more than " + std::to_string(n) + " characters"; }

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool MatchesQualifiedName(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])? per dot-separated label.
bool MatchesDns1123Subdomain(std::string_view s) {
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    const std::string_view label = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (label.empty() || !IsLowerAlnum(label.front()) || !IsLowerAlnum(label.back())) return false;
    if (!std::all_of(label.begin(), label.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; })) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace

Problems Dns1123SubdomainProblems(std::string_view value) {
  Problems out;
  if (value.size() > kDns1123SubdomainMaxLength) out.push_back(MaxLenError(kDns1123SubdomainMaxLength));
  if (!MatchesDns1123Subdomain(value))
    out.push_back(RegexError(kDns1123SubdomainMsg, kDns1123SubdomainFmt, {"example.com"}));
  return out;
}

Problems Dns1123LabelProblems(std::string_view value) {
  Problems out;
  if (value.size() > kDns1123LabelMaxLength) out.push_back(MaxLenError(kDns1123LabelMaxLength));
  if (value.find('.') == std::string_view::npos && MatchesDns1123Subdomain(value)) return out;
  if (MatchesDns1123Subdomain(value))
    out.push_back("must not contain dots");  // a valid subdomain, not a label: the length is checked above
  else
    out.push_back(RegexError(kDns1123LabelMsg, kDns1123LabelFmt, {"my-name", "123-abc"}));
  return out;
}

Problems QualifiedNameProblems(std::string_view value) {
  Problems out;
  const std::string name_regex = RegexError(kQualifiedNameMsg, kQualifiedNameFmt, {"MyName", "my.name", "123-abc"});
  std::string_view name = value;
  if (const size_t slash = value.find('/'); slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos)
      return {"a qualified name " + name_regex +
              " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"};
    const std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      out.push_back("prefix part must be non-empty");
    } else {
      for (const auto& m : Dns1123SubdomainProblems(prefix)) out.push_back("prefix part " + m);
    }
  }
  if (name.empty())
    out.push_back("name part must be non-empty");
  else if (name.size() > kQualifiedNameMaxLength)
    out.push_back("name part " + MaxLenError(kQualifiedNameMaxLength));
  if (!MatchesQualifiedName(name)) out.push_back("name part " + name_regex);
  return out;
}

Problems LabelValueProblems(std::string_view value) {
  Problems out;
  if (value.size() > kLabelValueMaxLength) out.push_back(MaxLenError(kLabelValueMaxLength));
  if (!value.empty() && !MatchesQualifiedName(value))
    out.push_back(
        RegexError(kLabelValueMsg, "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", {"MyValue", "my_value", "12345"}));
  return out;
}

Problems ConfigMapKeyProblems(std::string_view value) {
  Problems out;
  if (value.size() > kDns1123SubdomainMaxLength) out.push_back(MaxLenError(kDns1123SubdomainMaxLength));
  const bool ok = !value.empty() && std::all_of(value.begin(), value.end(),
                                                [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
  if (!ok) out.push_back(RegexError(kConfigMapKeyMsg, kConfigMapKeyFmt, {"key.name", "KEY_NAME", "key-name"}));
  if (value == ".")
    out.push_back("must not be '.'");
  else if (value == "..")
    out.push_back("must not be '..'");
  else if (value.substr(0, 2) == "..")
    out.push_back("must not start with '..'");
  return out;
}

Problems PortNameProblems(std::string_view value) {
  constexpr size_t kMaxLength = 15;
  Problems out;
  if (value.size() > kMaxLength) out.push_back(MaxLenError(kMaxLength));
  if (value.empty() || !std::all_of(value.begin(), value.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; }))
    out.push_back("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (std::none_of(value.begin(), value.end(), [](char c) { return c >= 'a' && c <= 'z'; }))
    out.push_back("must contain at least one letter (a-z)");
  if (value.find("--") != std::string_view::npos) out.push_back("must not contain consecutive hyphens");
  if (!value.empty() && (value.front() == '-' || value.back() == '-'))
    out.push_back("must not begin or end with a hyphen");
  return out;
}

Problems EnvVarNameProblems(std::string_view value) {
  if (value.empty()) return {"environment variable name must be non-empty"};
  // Go ranges over runes: any byte >= 0x80 is part of a non-ASCII rune (or
  // an invalid one), and the printable ASCII runes are 0x20..0x7E.
  const bool ok = std::all_of(value.begin(), value.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c >= 0x20 && c <= 0x7E && c != '=';
  });
  if (ok) return {};
  return {"a valid environment variable name must consist only of printable ASCII characters other than '='"};
}

}  // namespace ms::api
