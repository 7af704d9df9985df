// Rendering the Prometheus query for one ModelService from the query
// template (controller flag --prometheus-query).
//
// Substitution rule (exact):
//  - The template is scanned with PromQL's lexical rules for string literals
//    and comments: "..." and '...' (backslash escapes honoured), `...` (raw,
//    no escapes), and `#` comments to the end of the line.
//  - A string literal whose whole content is exactly `NS` (or `NAME`) is a
//    placeholder: the literal, quotes included, is replaced by a new
//    double-quoted literal holding the namespace (or the name), escaped with
//    QuotePromQLString(). Example: {namespace="NS"} -> {namespace="prod"}.
//  - If the placeholder is the right-hand side of a regex matcher (the last
//    non-blank text before it is `=~` or `!~`), the value is first escaped as
//    an RE2 literal (QuoteRegex), so `a.b` matches only "a.b".
//  - A literal whose whole content is exactly `PODS` on the right-hand side
//    of a regex matcher is replaced by a regex matching the names of the
//    object's pods (those of its Deployment: NAME-<template hash>-<suffix>):
//    QuoteRegex(name) + kPodNameSuffixRegex, as a double-quoted literal.
//    Elsewhere `PODS` is left as written. (A name over 47 bytes makes pod
//    names the API server truncates, which this regex does not match.)
//  - Nothing else is touched: NS/NAME as bare identifiers, inside a longer
//    literal ("NS-x", "my NAME"), in raw `...` strings with other content, or
//    in comments stay as written; case matters ("ns" is not a placeholder).
//  - An unterminated literal is copied through unchanged (Prometheus will
//    reject the query; the values cannot alter that).
// Because every substituted value becomes one well-formed double-quoted
// literal whose bytes outside printable ASCII are \x-escaped, no namespace
// or name can end the literal, add matchers, or otherwise change the query.
#pragma once

#include <string>
#include <string_view>

namespace ms::autoscale {

inline constexpr std::string_view kDefaultQueryTemplate =
    R"(sum(modelservice_queue_length{namespace="NS",modelservice="NAME"}))";

// The GPU utilization of the object's pods (--prometheus-gpu-query): the
// DCGM exporter's per-GPU gauge, joined to the pods by its pod and namespace
// labels, one series per pod (the mean of its GPUs); the controller averages
// the series and counts them (the pods that report).
inline constexpr std::string_view kDefaultGpuQueryTemplate =
    R"(avg by (pod) (DCGM_FI_DEV_GPU_UTIL{namespace="NS",pod=~"PODS"}))";

// What follows the escaped name in the regex of a Deployment's pod names.
inline constexpr std::string_view kPodNameSuffixRegex = "-[a-z0-9]+-[a-z0-9]+";

// `v` as a PromQL double-quoted string literal, quotes included: `\` -> `\\`,
// `"` -> `\"`, newline/CR/tab -> `\n`/`\r`/`\t`, every other byte below 0x20,
// 0x7f and every byte >= 0x80 -> `\xHH` (Go/PromQL escapes decode these back
// to the same bytes). The result is pure printable ASCII.
std::string QuotePromQLString(std::string_view v);

// RE2 escaping of a literal (like Go's regexp.QuoteMeta): a backslash before
// each of \.+*?()|[]{}^$ .
std::string QuoteRegex(std::string_view v);

// Applies the substitution rule above.
std::string RenderQuery(std::string_view query_template, std::string_view ns, std::string_view name);

}  // namespace ms::autoscale
