// How the controller authenticates to Prometheus: the settings of the
// --prometheus-* flags of authentication and TLS, and the rules they must
// keep (checked at start-up, so a wrong combination never reaches a query).
//
//  - At most one of the bearer token (--prometheus-bearer-token-file) and
//    basic auth (--prometheus-basic-auth-username with
//    --prometheus-basic-auth-password-file): both are the Authorization
//    header. A username needs its password file and the other way round; a
//    username holds no ':' (RFC 7617).
//  - A client certificate needs its key and the other way round.
//  - Extra headers (--prometheus-header Name=Value, --prometheus-header-file
//    Name=PATH): the name is an RFC 7230 token, not Authorization (the
//    options above own it), and named once (case-insensitively, over both
//    flags); a value is not empty and holds no control character but tab
//    (no CR or LF: a header cannot be split in two).
//
// Errors name the flag and the header name, never a value or a file's
// contents.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ms::autoscale {

struct PrometheusAuth {
  std::string bearer_token_file;
  std::string basic_auth_username;
  std::string basic_auth_password_file;
  std::string ca_file;    // for https; empty: the system CA store
  std::string cert_file;  // client certificate (PEM), with key_file
  std::string key_file;
  std::vector<std::string> headers;       // "Name=Value" each
  std::vector<std::string> header_files;  // "Name=PATH" each: the value is the file's content
};

// One header of --prometheus-header or --prometheus-header-file.
struct HeaderSetting {
  std::string name;
  std::string value;  // the value, or the file's path
};

// `setting` ("Name=Value", split at the first '=') of flag `flag` (without
// dashes) into `out`: "" or why it cannot be sent. With `value_is_path` the
// value is a file's path (only checked for being non-empty).
std::string ParseHeaderSetting(std::string_view flag, std::string_view setting, bool value_is_path, HeaderSetting* out);

// Why a header value cannot be sent (empty, or a control character other
// than tab), or "".
std::string CheckHeaderValue(std::string_view value);

// Every rule above over the whole set: "" or the first broken one.
std::string CheckPrometheusAuth(const PrometheusAuth& auth);

// Whether the files named can be read (the token and password not empty):
// "" or why not, naming the flag and the path. Reads the files (start-up).
std::string CheckPrometheusAuthFiles(const PrometheusAuth& auth);

}  // namespace ms::autoscale
