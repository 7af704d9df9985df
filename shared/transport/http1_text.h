// The text rules of HTTP/1.1 that the connection (http1.h) applies: tokens,
// field values, request targets (RFC 9110, 9112), the Date header's format
// and the reason phrases.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace ms::transport {

// Optional white space around header values (RFC 9110 5.6.3).
inline constexpr std::string_view kOws = " \t";

// A token (RFC 9110 5.6.2): a method, a header name.
bool IsToken(std::string_view s);
// ASCII lower case.
std::string Lower(std::string_view s);
// True when the comma-separated header value lists `token` (lower case).
bool ListsToken(const std::string* value, std::string_view token);
// A field value may hold visible characters, spaces, tabs and obs-text
// (bytes >= 0x80), nothing else (RFC 9110 5.5).
bool IsFieldValue(std::string_view v);
// A request-target in origin form: visible ASCII only, starting with '/'.
bool IsTarget(std::string_view t);
// IMF-fixdate (RFC 9110 5.6.7): Sun, 06 Nov 1994 08:49:37 GMT.
std::string HttpDate(std::chrono::system_clock::time_point t);

}  // namespace ms::transport
