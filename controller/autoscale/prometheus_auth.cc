#include "controller/autoscale/prometheus_auth.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <tuple>

#include "shared/process/files.h"
#include "shared/text/strings.h"

namespace ms::autoscale {

namespace {

// RFC 7230 tchar: "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
// "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA.
bool IsTokenChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (std::isalnum(u) != 0 && u < 0x80) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), IsTokenChar); }

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// The names of both header flags, each once (case-insensitively).
std::string CheckHeaders(const PrometheusAuth& auth) {
  std::vector<std::string> seen;
  for (const auto& [flag, settings, is_path] : {std::tuple{"prometheus-header", &auth.headers, false},
                                                std::tuple{"prometheus-header-file", &auth.header_files, true}}) {
    for (const std::string& s : *settings) {
      HeaderSetting h;
      if (std::string err = ParseHeaderSetting(flag, s, is_path, &h); !err.empty()) return err;
      if (std::find(seen.begin(), seen.end(), Lower(h.name)) != seen.end())
        return std::string("--") + flag + ": the header " + h.name +
               " is given twice (--prometheus-header and --prometheus-header-file name each header once)";
      seen.push_back(Lower(h.name));
    }
  }
  return {};
}

// Both or neither of a pair of flags.
std::string CheckPair(const std::string& a, const char* a_flag, const std::string& b, const char* b_flag) {
  if (!a.empty() && b.empty()) return std::string("--") + a_flag + " needs --" + b_flag;
  if (a.empty() && !b.empty()) return std::string("--") + b_flag + " needs --" + a_flag;
  return {};
}

// A file the flag names: readable, and with `secret` not empty once trimmed.
std::string CheckFile(const char* flag, const std::string& path, bool secret) {
  if (path.empty()) return {};
  std::string content;
  try {
    content = process::ReadFile(path);
  } catch (const std::runtime_error& e) {
    return std::string("--") + flag + ": " + e.what();
  }
  if (secret && text::Trim(content).empty()) return std::string("--") + flag + ": " + path + " is empty";
  return {};
}

}  // namespace

std::string CheckHeaderValue(std::string_view value) {
  if (value.empty()) return "the value is empty";
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (u == '\r' || u == '\n') return "the value holds a line break (CR or LF)";
    if ((u < 0x20 && u != '\t') || u == 0x7f) return "the value holds a control character";
  }
  return {};
}

std::string ParseHeaderSetting(std::string_view flag, std::string_view setting, bool value_is_path,
                               HeaderSetting* out) {
  const std::string where = "--" + std::string(flag) + ": ";
  const size_t eq = setting.find('=');
  if (eq == std::string_view::npos)
    return where + "want " + (value_is_path ? "Name=PATH" : "Name=Value") +
           " (e.g. X-Scope-OrgID=" + (value_is_path ? "/etc/prometheus/tenant" : "tenant-a") + ")";
  const std::string_view name = setting.substr(0, eq);
  const std::string_view value = setting.substr(eq + 1);
  if (!IsToken(name))
    return where + "\"" + std::string(name.substr(0, 64)) +
           "\" is not an HTTP header name (an RFC 7230 token: letters, digits and !#$%&'*+-.^_`|~)";
  if (Lower(name) == "authorization")
    return where +
           "Authorization is not an extra header: --prometheus-bearer-token-file or "
           "--prometheus-basic-auth-username with --prometheus-basic-auth-password-file set it";
  if (value_is_path) {
    if (value.empty()) return where + std::string(name) + ": the path is empty";
  } else if (std::string why = CheckHeaderValue(value); !why.empty()) {
    return where + std::string(name) + ": " + why;
  }
  *out = {std::string(name), std::string(value)};
  return {};
}

std::string CheckPrometheusAuth(const PrometheusAuth& auth) {
  if (!auth.bearer_token_file.empty() && (!auth.basic_auth_username.empty() || !auth.basic_auth_password_file.empty()))
    return "--prometheus-bearer-token-file and --prometheus-basic-auth-* are mutually exclusive: both set the "
           "Authorization header; choose one";
  if (std::string err = CheckPair(auth.basic_auth_username, "prometheus-basic-auth-username",
                                  auth.basic_auth_password_file, "prometheus-basic-auth-password-file");
      !err.empty())
    return err;
  if (auth.basic_auth_username.find(':') != std::string::npos)
    return "--prometheus-basic-auth-username: a user name holds no ':' (RFC 7617)";
  if (std::string why = CheckHeaderValue(auth.basic_auth_username); !auth.basic_auth_username.empty() && !why.empty())
    return "--prometheus-basic-auth-username: " + why;
  if (std::string err = CheckPair(auth.cert_file, "prometheus-cert-file", auth.key_file, "prometheus-key-file");
      !err.empty())
    return err;
  return CheckHeaders(auth);
}

std::string CheckPrometheusAuthFiles(const PrometheusAuth& auth) {
  for (const auto& [flag, path, secret] :
       {std::tuple{"prometheus-bearer-token-file", &auth.bearer_token_file, true},
        std::tuple{"prometheus-basic-auth-password-file", &auth.basic_auth_password_file, true},
        std::tuple{"prometheus-ca-file", &auth.ca_file, false},
        std::tuple{"prometheus-cert-file", &auth.cert_file, false},
        std::tuple{"prometheus-key-file", &auth.key_file, false}}) {
    if (std::string err = CheckFile(flag, *path, secret); !err.empty()) return err;
  }
  for (const std::string& s : auth.header_files) {
    HeaderSetting h;
    if (std::string err = ParseHeaderSetting("prometheus-header-file", s, true, &h); !err.empty()) return err;
    if (std::string err = CheckFile("prometheus-header-file", h.value, true); !err.empty()) return err;
    if (std::string why = CheckHeaderValue(text::Trim(process::ReadFile(h.value))); !why.empty())
      return "--prometheus-header-file: " + h.name + ": in " + h.value + ", " + why;
  }
  return {};
}

}  // namespace ms::autoscale
