#include "controller/autoscale/promql.h"

namespace ms::autoscale {

std::string QuotePromQLString(std::string_view v) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(v.size() + 2);
  out.push_back('"');
  for (char ch : v) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          out += "\\x";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xf]);
        } else {
          out.push_back(ch);
        }
    }
  }
  out.push_back('"');
  return out;
}

std::string QuoteRegex(std::string_view v) {
  static constexpr std::string_view kSpecial = "\\.+*?()|[]{}^$";
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (kSpecial.find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

namespace {

// True when the output so far, ignoring trailing blanks, ends in =~ or !~.
bool AfterRegexMatcher(const std::string& out) {
  size_t end = out.find_last_not_of(" \t\r\n");
  if (end == std::string::npos || end < 1) return false;
  return out[end] == '~' && (out[end - 1] == '=' || out[end - 1] == '!');
}

}  // namespace

std::string RenderQuery(std::string_view tmpl, std::string_view ns, std::string_view name) {
  std::string out;
  out.reserve(tmpl.size() + ns.size() + name.size() + 8);
  size_t i = 0;
  while (i < tmpl.size()) {
    const char c = tmpl[i];
    if (c == '#') {  // comment: copy to end of line
      size_t eol = tmpl.find('\n', i);
      if (eol == std::string_view::npos) eol = tmpl.size();
      out.append(tmpl.substr(i, eol - i));
      i = eol;
      continue;
    }
    if (c != '"' && c != '\'' && c != '`') {
      out.push_back(c);
      ++i;
      continue;
    }
    // A string literal starting at i: find its closing quote.
    size_t j = i + 1;
    bool closed = false;
    while (j < tmpl.size()) {
      if (c != '`' && tmpl[j] == '\\') {
        j += 2;
        continue;
      }
      if (tmpl[j] == c) {
        closed = true;
        break;
      }
      ++j;
    }
    if (!closed) {
      out.append(tmpl.substr(i));
      break;
    }
    const std::string_view literal = tmpl.substr(i, j + 1 - i);
    const std::string_view content = tmpl.substr(i + 1, j - i - 1);
    const std::string_view* value = nullptr;
    if (content == "NS")
      value = &ns;
    else if (content == "NAME")
      value = &name;
    if (content == "PODS" && AfterRegexMatcher(out)) {
      out += QuotePromQLString(QuoteRegex(name) + std::string(kPodNameSuffixRegex));
    } else if (value == nullptr) {
      out.append(literal);
    } else if (AfterRegexMatcher(out)) {
      out += QuotePromQLString(QuoteRegex(*value));
    } else {
      out += QuotePromQLString(*value);
    }
    i = j + 1;
  }
  return out;
}

}  // namespace ms::autoscale
