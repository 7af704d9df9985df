// The validate report as JUnit XML (the common schema CI systems read:
// testsuites > testsuite > testcase with failure, error, skipped and
// system-out).
#include <ostream>

#include "shared/api/prune.h"
#include "shared/api/types.h"
#include "webhook/validate/validate.h"

namespace ms::validate {

namespace {

// Text in an attribute or element: the five XML escapes, control
// characters (not allowed in XML 1.0) as '?'.
std::string Xml(const std::string& s) {
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += (c < 0x20 && c != '\n' && c != '\t') || c == 0x7F ? '?' : ch;
    }
  }
  return out;
}

std::string CaseName(const std::string& document, const std::string& name) {
  return document + " (" + (name.empty() ? "no metadata.name" : name) + ")";
}

void PrintResult(const DocumentResult& r, std::ostream& out) {
  out << "    <testcase classname=\"" << Xml(r.file) << "\" name=\"" << Xml(CaseName(r.document, r.name)) << "\">\n";
  if (!r.valid()) {
    std::string first, all;
    const char* type = "UnknownField";
    if (!r.unknown_fields.empty()) {
      first = all = api::StrictDecodingError(r.unknown_fields);
      all += "\n";
    } else {
      first = r.errors.front().ToString();
      type = Reason(r.errors.front().type);
    }
    for (const auto& e : r.errors) all += e.ToString() + "\n";
    out << "      <failure message=\"" << Xml(first) << "\" type=\"" << type << "\">" << Xml(all) << "</failure>\n";
  }
  if (!r.warnings.empty()) {
    out << "      <system-out>";
    for (const auto& w : r.warnings) out << Xml("Warning: " + w) << "\n";
    out << "</system-out>\n";
  }
  out << "    </testcase>\n";
}

// One file's results, look-alikes and input errors.
struct FileCases {
  std::vector<const DocumentResult*> results;
  std::vector<const Skipped*> skipped;
  std::vector<const InputError*> errors;
  size_t failures() const {
    size_t n = 0;
    for (const auto* r : results) n += r->valid() ? 0 : 1;
    return n;
  }
};

}  // namespace

void PrintJUnit(const Report& report, std::ostream& out) {
  std::vector<std::pair<std::string, FileCases>> files;  // in report order
  auto file = [&](const std::string& name) -> FileCases& {
    for (auto& [n, c] : files)
      if (n == name) return c;
    return files.emplace_back(name, FileCases{}).second;
  };
  for (const auto& r : report.results) file(r.file).results.push_back(&r);
  for (const auto& s : report.skipped)
    if (s.LookAlike()) file(s.file).skipped.push_back(&s);
  for (const auto& e : report.input_errors) file(e.file).errors.push_back(&e);

  size_t tests = 0, failures = report.invalid(), errors = report.input_errors.size();
  for (const auto& [n, c] : files) tests += c.results.size() + c.skipped.size() + c.errors.size();
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"modelservice-webhook validate\" tests=\"" << tests << "\" failures=\"" << failures
      << "\" errors=\"" << errors << "\">\n";
  for (const auto& [name, c] : files) {
    out << "  <testsuite name=\"" << Xml(name) << "\" tests=\"" << c.results.size() + c.skipped.size() + c.errors.size()
        << "\" failures=\"" << c.failures() << "\" errors=\"" << c.errors.size() << "\" skipped=\"" << c.skipped.size()
        << "\">\n";
    for (const auto* r : c.results) PrintResult(*r, out);
    for (const auto* s : c.skipped)
      out << "    <testcase classname=\"" << Xml(name) << "\" name=\"" << Xml(CaseName(s->document, s->name))
          << "\">\n      <skipped message=\""
          << Xml("apiVersion \"" + s->api_version + "\" kind \"" + s->kind + "\" is not " + api::kApiVersion + " " +
                 api::kKind)
          << "\"/>\n    </testcase>\n";
    for (const auto* e : c.errors)
      out << "    <testcase classname=\"" << Xml(name) << "\" name=\"" << Xml(name) << "\">\n      <error message=\""
          << Xml(e->message) << "\" type=\"InputError\"/>\n    </testcase>\n";
    out << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
}

}  // namespace ms::validate
