#include "controller/autoscale/prometheus_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <system_error>

#include "controller/kube/curl_handles.h"
#include "controller/kube/paths.h"
#include "shared/text/json_fields.h"

namespace ms::autoscale {

namespace {

using nlohmann::json;

// Printable, bounded text for error messages.
std::string Snippet(std::string_view s, size_t max = 200) {
  std::string out;
  for (char c : s.substr(0, max)) {
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u < 0x20 || u == 0x7f ? ' ' : c);
  }
  if (s.size() > max) out += "...";
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The text without libcurl's durations (" after 3 ms", " after 1001
// milliseconds": "Failed to connect to prom port 9090 after 3 ms: Couldn't
// connect to server"): the same failure must read the same each time, since
// status messages are built from it and compared to avoid writes.
std::string WithoutDurations(std::string_view s) {
  static constexpr std::string_view kAfter = " after ";
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const size_t at = s.find(kAfter, i);
    if (at == std::string_view::npos) {
      out.append(s.substr(i));
      break;
    }
    size_t j = at + kAfter.size();
    const size_t digits = j;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
    size_t end = std::string_view::npos;
    for (std::string_view unit : {" milliseconds", " ms"}) {
      if (j > digits && s.substr(j, unit.size()) == unit) end = j + unit.size();
    }
    if (end == std::string_view::npos) {  // not a duration: keep " after" and look further
      out.append(s.substr(i, at + 1 - i));
      i = at + 1;
      continue;
    }
    out.append(s.substr(i, at - i));
    i = end;
  }
  return out;
}

// A sample value: the API's string ("1.5", "NaN", "+Inf", "-Inf"), or a
// number for lenience. Returns false when unparseable.
bool ParseSampleValue(const json& v, double& out) {
  if (v.is_number()) {
    out = v.get<double>();
    return true;
  }
  if (!v.is_string()) return false;
  std::string_view s = v.get_ref<const std::string&>();
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);  // "+Inf"
  if (s.empty()) return false;
  double d = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ptr != s.data() + s.size()) return false;
  if (ec == std::errc::result_out_of_range) {
    d = (s.front() == '-') ? -HUGE_VAL : HUGE_VAL;  // overflow: report as infinite
  } else if (ec != std::errc()) {
    return false;
  }
  out = d;
  return true;
}

// [timestamp, "value"] -> value, or an error.
QueryResult ParsePair(const json& pair, const std::string& what) {
  if (!pair.is_array() || pair.size() != 2) return QueryResult::Error("malformed " + what + ": expected [time, value]");
  double v = 0;
  if (!ParseSampleValue(pair[1], v))
    return QueryResult::Error("malformed " + what + " value " + Snippet(pair[1].dump()));
  if (std::isnan(v)) return QueryResult::Error(what + " is NaN");
  if (std::isinf(v)) return QueryResult::Error(what + " is " + (v > 0 ? "+Inf" : "-Inf"));
  return QueryResult::Value(v);
}

}  // namespace

std::string QueryUrl(std::string_view base_url, std::string_view promql) {
  while (!base_url.empty() && base_url.back() == '/') base_url.remove_suffix(1);
  std::string url(base_url);
  url += "/api/v1/query?query=";
  url += kube::UrlEncode(promql);
  return url;
}

namespace {

QueryResult ParseAnswer(long http_status, std::string_view body) {
  const bool http_ok = http_status >= 200 && http_status < 300;
  json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    if (!http_ok) {
      std::string msg = "HTTP " + std::to_string(http_status);
      const std::string snip = Snippet(body);
      if (!snip.empty()) msg += ": " + snip;
      return QueryResult::Error(msg);
    }
    return QueryResult::Error("invalid JSON in response: " + Snippet(body));
  }
  const std::string status = text::StringField(doc, "status");
  if (status == "error") {
    std::string msg;
    if (!http_ok) msg = "HTTP " + std::to_string(http_status) + ": ";
    const std::string type = text::StringField(doc, "errorType");
    const std::string err = text::StringField(doc, "error");
    msg += (type.empty() ? "error" : type) + ": " + (err.empty() ? "(no message)" : Snippet(err, 500));
    return QueryResult::Error(msg);
  }
  if (!http_ok) return QueryResult::Error("HTTP " + std::to_string(http_status) + ": " + Snippet(body));
  if (status != "success") return QueryResult::Error("unexpected status \"" + Snippet(status) + "\" in response");

  auto data = doc.find("data");
  if (data == doc.end() || !data->is_object()) return QueryResult::Error("response has no data object");
  const std::string type = text::StringField(*data, "resultType");
  auto result = data->find("result");
  if (result == data->end()) return QueryResult::Error("response has no data.result");

  if (type == "scalar") return ParsePair(*result, "scalar");
  if (type != "vector") {
    return QueryResult::Error("unsupported resultType \"" + Snippet(type) +
                              "\": the query must return an instant vector or a scalar");
  }
  if (!result->is_array()) return QueryResult::Error("malformed vector result");
  if (result->empty()) return QueryResult::Error("no series (the query returned an empty vector)");
  double sum = 0;
  for (const auto& series : *result) {
    if (!series.is_object() || !series.contains("value")) return QueryResult::Error("malformed vector sample");
    std::string what = "series";
    if (auto m = series.find("metric"); m != series.end() && m->is_object() && !m->empty()) {
      what += " " + Snippet(m->dump(), 300);
    }
    QueryResult v = ParsePair(series["value"], what);
    if (!v.ok) return v;
    sum += v.value;
  }
  if (!std::isfinite(sum))
    return QueryResult::Error("the sum of " + std::to_string(result->size()) + " series overflows");
  return QueryResult::Value(sum, static_cast<int>(result->size()));
}

}  // namespace

QueryResult ParseQueryResponse(long http_status, std::string_view body) {
  QueryResult r = ParseAnswer(http_status, body);
  if (!r.ok && http_status >= 500) r.unreachable = true;  // the endpoint failed, not the query
  return r;
}

std::string UrlPassword(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return {};
  std::string_view rest = url.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  const size_t at = rest.rfind('@');
  if (at == std::string_view::npos) return {};
  const std::string_view userinfo = rest.substr(0, at);
  const size_t colon = userinfo.find(':');
  return colon == std::string_view::npos ? std::string() : std::string(userinfo.substr(colon + 1));
}

PrometheusClient::PrometheusClient(std::string base_url, PrometheusClientOptions options, const clock::Clock& clock)
    : base_url_(std::move(base_url)), options_(std::move(options)), credentials_(options_.auth, clock) {
  if (std::string p = UrlPassword(base_url_); !p.empty()) url_secrets_.push_back(std::move(p));
}

// One request and what came of it.
struct PrometheusClient::Attempt {
  CURLcode rc = CURLE_OK;
  long http = 0;
  std::string body;
  std::string failure;               // the transport's error text, when rc != CURLE_OK
  bool timed_out = false;            // the deadline passed (failure is then curl's words for it)
  long elapsed_ms = 0;               // how long it took
  std::vector<std::string> secrets;  // what it sent that no text may show
  std::string refused;               // non-empty: not sent (a header file's value cannot be)
};

PrometheusClient::Attempt PrometheusClient::Send(const std::string& url, long timeout_ms) {
  Attempt a;
  RequestCredentials creds = credentials_.Current();
  a.secrets = std::move(creds.secrets);
  a.secrets.insert(a.secrets.end(), url_secrets_.begin(), url_secrets_.end());
  if (!creds.error.empty()) {
    a.refused = creds.error;
    return a;
  }
  // Everything the handle points at is declared before it, so it outlives
  // the handle.
  kube::curl::BoundedBody sink(options_.max_response_bytes);
  char errbuf[CURL_ERROR_SIZE] = {};
  kube::curl::SlistPtr headers(curl_slist_append(nullptr, "Accept: application/json"));
  for (const std::string& line : creds.header_lines) kube::curl::Append(headers, line.c_str());
  kube::curl::EasyPtr h(curl_easy_init());
  if (!h) {
    a.rc = CURLE_FAILED_INIT;
    a.failure = "curl_easy_init failed";
    return a;
  }
  const long connect_ms = std::clamp<long>(static_cast<long>(options_.connect_timeout.count()), 1, timeout_ms);
  CURL* c = h.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  sink.AttachTo(c);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_USERAGENT, "modelservice-controller");
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
  const PrometheusAuth& tls = options_.auth;
  if (!tls.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, tls.ca_file.c_str());
  if (!tls.cert_file.empty()) curl_easy_setopt(c, CURLOPT_SSLCERT, tls.cert_file.c_str());
  if (!tls.key_file.empty()) curl_easy_setopt(c, CURLOPT_SSLKEY, tls.key_file.c_str());
  if (!options_.no_proxy.empty()) curl_easy_setopt(c, CURLOPT_NOPROXY, options_.no_proxy.c_str());

  a.rc = curl_easy_perform(c);
  curl_off_t took_us = 0;
  curl_easy_getinfo(c, CURLINFO_TOTAL_TIME_T, &took_us);
  a.elapsed_ms = static_cast<long>(took_us / 1000);
  if (a.rc != CURLE_OK) {
    // A timeout's text in errbuf counts the milliseconds and bytes: the
    // same failure would read differently each time.
    a.failure = sink.Failure();
    a.timed_out = a.failure.empty() && a.rc == CURLE_OPERATION_TIMEDOUT;
    if (a.failure.empty())
      a.failure =
          (errbuf[0] != '\0' && !a.timed_out) ? WithoutDurations(errbuf) : std::string(curl_easy_strerror(a.rc));
    return a;
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a.http);
  a.body = std::move(sink.data);
  return a;
}

QueryResult PrometheusClient::Outcome(const Attempt& a, long timeout_ms) const {
  if (!a.refused.empty()) return QueryResult::Error(a.refused);
  if (a.rc != CURLE_OK) {
    std::string msg =
        "GET " + Snippet(Redact(base_url_, a.secrets)) + " failed: " + Snippet(Redact(a.failure, a.secrets));
    if (a.timed_out) msg += " (timeout " + std::to_string(timeout_ms) + " ms)";
    return QueryResult::Unreachable(std::move(msg));
  }
  QueryResult r = ParseQueryResponse(a.http, a.body);
  if (!r.ok && !a.secrets.empty()) {
    // The error may quote the answer: made again from the answer without
    // the secrets, then without any the text still shows.
    r = ParseQueryResponse(a.http, Redact(a.body, a.secrets));
    r.error = Redact(std::move(r.error), a.secrets);
  }
  return r;
}

QueryResult PrometheusClient::Query(const std::string& promql) {
  if (base_url_.rfind("http://", 0) != 0 && base_url_.rfind("https://", 0) != 0) {
    return QueryResult::Error("invalid Prometheus URL \"" + Snippet(Redact(base_url_, url_secrets_)) +
                              "\": want http(s)://host[:port][/prefix]");
  }
  const std::string url = QueryUrl(base_url_, promql);
  const long timeout_ms = std::max<long>(1, static_cast<long>(options_.timeout.count()));
  Attempt a = Send(url, timeout_ms);
  // A 401 with credentials from files: a file may have rotated within the
  // minute; read them again, and with a new value ask again in the time left.
  if (a.rc == CURLE_OK && a.http == 401 && credentials_.has_files() && credentials_.Refresh() &&
      a.elapsed_ms < timeout_ms)
    a = Send(url, timeout_ms - a.elapsed_ms);
  return Outcome(a, timeout_ms);
}

}  // namespace ms::autoscale
