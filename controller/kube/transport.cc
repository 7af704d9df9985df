#include "controller/kube/transport.h"

#include <curl/header.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>

namespace ms::kube {

std::string HostPort(const std::string& server) {
  std::string rest = server;
  std::string scheme = "https";
  if (auto p = rest.find("://"); p != std::string::npos) {
    scheme = rest.substr(0, p);
    rest = rest.substr(p + 3);
  }
  rest = rest.substr(0, rest.find('/'));
  if (auto at = rest.rfind('@'); at != std::string::npos) rest = rest.substr(at + 1);
  const auto bracket = rest.rfind(']');
  const auto colon = rest.rfind(':');
  const bool has_port = colon != std::string::npos && (bracket == std::string::npos || colon > bracket);
  if (!has_port) rest += scheme == "http" ? ":80" : ":443";
  return rest;
}

namespace {

bool Is2xx(long code) { return code >= 200 && code < 300; }

// The callbacks' view of one request.
struct Flight {
  const Exchange* exchange;
  const char* stopped_by = nullptr;  // set by a callback that stopped the transfer
  bool sent = false;                 // the pre-request callback let it go
};

int OnPrereq(void* userdata, char*, char*, int, int) {
  auto* f = static_cast<Flight*>(userdata);
  f->stopped_by = f->exchange->check ? f->exchange->check() : nullptr;
  if (f->stopped_by != nullptr) return CURL_PREREQFUNC_ABORT;
  f->sent = true;
  return CURL_PREREQFUNC_OK;
}

int OnProgress(void* userdata, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* f = static_cast<Flight*>(userdata);
  f->stopped_by = f->exchange->check ? f->exchange->check() : nullptr;
  return f->stopped_by != nullptr ? 1 : 0;  // non-zero aborts (CURLE_ABORTED_BY_CALLBACK)
}

// The body of a streamed GET: a 2xx answer's to the consumer, another's kept.
struct StreamSink {
  CURL* easy = nullptr;
  const std::function<bool(std::string_view)>* consume = nullptr;
  std::stop_token stop;
  const std::atomic<bool>* closed = nullptr;
  long http = 0;
  std::string error_body;
  bool stopped = false;
  std::string exception;  // what escaped the consumer, if anything
};

size_t WriteStream(char* ptr, size_t size, size_t nmemb, void* userdata) {
  auto* sink = static_cast<StreamSink*>(userdata);
  return curl::Barrier(sink, [&]() -> size_t {
    const size_t n = size * nmemb;
    if (sink->http == 0) curl_easy_getinfo(sink->easy, CURLINFO_RESPONSE_CODE, &sink->http);
    if (sink->stop.stop_requested() || sink->closed->load()) {
      sink->stopped = true;
      return 0;
    }
    if (!Is2xx(sink->http)) {
      constexpr size_t kMaxErrorBody = 1u << 20;
      if (sink->error_body.size() < kMaxErrorBody) sink->error_body.append(ptr, std::min(n, kMaxErrorBody));
      return n;
    }
    if (!(*sink->consume)(std::string_view(ptr, n))) {
      sink->stopped = true;
      return 0;
    }
    return n;
  });
}

// The Retry-After of a 429 or 5xx answer: delay-seconds, or an HTTP date
// (libcurl turns that into seconds from now; a date past is 0 s).
std::optional<clock::Clock::Duration> RetryAfter(CURL* h, long http) {
  if (http != 429 && http < 500) return std::nullopt;
  curl_header* header = nullptr;
  if (curl_easy_header(h, "Retry-After", 0, CURLH_HEADER, -1, &header) != CURLHE_OK) return std::nullopt;
  std::string_view value(header->value);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  long long seconds = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec == std::errc() && end == value.data() + value.size() && seconds >= 0) return std::chrono::seconds(seconds);
  if (ec == std::errc::result_out_of_range) return std::chrono::seconds(std::numeric_limits<int32_t>::max());
  curl_off_t from_date = 0;
  if (curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &from_date) != CURLE_OK) return std::nullopt;
  if (from_date == 0 && value.find(',') == std::string_view::npos) return std::nullopt;  // neither form
  return std::chrono::seconds(from_date);
}

}  // namespace

Transport::Transport(RestConfig config, TransportOptions options)
    : config_(std::move(config)), options_(options), host_(HostPort(config_.server)) {
  while (!config_.server.empty() && config_.server.back() == '/') config_.server.pop_back();
}

Transport::~Transport() = default;

curl::EasyPtr Transport::Acquire() {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!pool_.empty()) {
      curl::EasyPtr h = std::move(pool_.back());
      pool_.pop_back();
      return h;
    }
  }
  return curl::EasyPtr(curl_easy_init());
}

void Transport::Release(curl::EasyPtr h) {
  std::lock_guard<std::mutex> g(mu_);
  if (pool_.size() < options_.max_idle_handles) pool_.push_back(std::move(h));
}

void Transport::Prepare(CURL* h, const std::string& path, const std::string& token, curl::SlistPtr& headers,
                        const char* content_type, char* errbuf) {
  curl_easy_reset(h);
  const std::string url = config_.server + (path.empty() || path.front() != '/' ? "/" : "") + path;
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_USERAGENT, config_.user_agent.c_str());
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 15L);
  curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
  // HTTP/1.1: each pooled handle keeps its own connection, so HTTP/2's
  // multiplexing would bring nothing but its framing (about a tenth of the
  // controller's CPU, measured).
  curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  auto blob = [h](CURLoption option, std::string& pem) {
    curl_blob b{pem.data(), pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(h, option, &b);
  };
  if (!config_.ca_pem.empty()) blob(CURLOPT_CAINFO_BLOB, config_.ca_pem);
  if (!config_.client_cert_pem.empty()) {
    blob(CURLOPT_SSLCERT_BLOB, config_.client_cert_pem);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
  }
  if (!config_.client_key_pem.empty()) {
    blob(CURLOPT_SSLKEY_BLOB, config_.client_key_pem);
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
  }
  if (config_.insecure_skip_tls_verify) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  curl::Append(headers, "Accept: application/json");
  if (content_type != nullptr) curl::Append(headers, (std::string("Content-Type: ") + content_type).c_str());
  if (!token.empty()) curl::Append(headers, ("Authorization: Bearer " + token).c_str());
  curl::Append(headers, "Expect:");  // no 100-continue round trip for large bodies
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
}

Answer Transport::Send(const Exchange& x) {
  Answer answer;
  curl::EasyPtr h = Acquire();
  if (!h) {
    answer.curl = CURLE_OUT_OF_MEMORY;
    answer.error = "curl_easy_init failed";
    return answer;
  }
  char errbuf[CURL_ERROR_SIZE] = {};
  curl::SlistPtr headers;
  Prepare(h.get(), x.path, x.token, headers, x.content_type, errbuf);
  const auto limit_ms = std::chrono::ceil<std::chrono::milliseconds>(x.limit).count();
  curl_easy_setopt(h.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<int64_t>(1, limit_ms)));
  Flight flight{&x};
  curl_easy_setopt(h.get(), CURLOPT_PREREQFUNCTION, &OnPrereq);
  curl_easy_setopt(h.get(), CURLOPT_PREREQDATA, &flight);
  curl_easy_setopt(h.get(), CURLOPT_XFERINFOFUNCTION, &OnProgress);
  curl_easy_setopt(h.get(), CURLOPT_XFERINFODATA, &flight);
  curl_easy_setopt(h.get(), CURLOPT_NOPROGRESS, 0L);
  // gzip for large lists (not for watches: a compressor may hold events back).
  curl_easy_setopt(h.get(), CURLOPT_ACCEPT_ENCODING, "");
  if (std::string_view(x.method) == "GET") {
    curl_easy_setopt(h.get(), CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(h.get(), CURLOPT_CUSTOMREQUEST, x.method);
  }
  if (x.body != nullptr) {
    curl_easy_setopt(h.get(), CURLOPT_POSTFIELDS, x.body->data());
    curl_easy_setopt(h.get(), CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(x.body->size()));
  }
  curl::BoundedBody sink(options_.max_response_bytes);
  sink.AttachTo(h.get());
  answer.curl = curl_easy_perform(h.get());
  curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &answer.http);
  answer.stopped_by = flight.stopped_by;
  answer.sent = flight.sent;
  answer.too_large = sink.overflow;
  if (answer.curl == CURLE_OK) answer.retry_after = RetryAfter(h.get(), answer.http);
  if (answer.curl != CURLE_OK) {
    answer.error = sink.Failure();
    if (answer.error.empty()) answer.error = errbuf[0] != '\0' ? std::string(errbuf) : curl_easy_strerror(answer.curl);
  }
  answer.body = std::move(sink.data);
  Release(std::move(h));
  return answer;
}

StreamEnd Transport::Stream(const std::string& path, const std::string& token,
                            const std::function<bool(std::string_view)>& consume, std::stop_token stop) {
  StreamEnd end;
  curl::EasyPtr h(curl_easy_init());
  curl::MultiPtr multi(curl_multi_init());
  if (!h || !multi) {
    end.done = CURLE_FAILED_INIT;
    end.error = "curl init failed";
    return end;
  }
  char errbuf[CURL_ERROR_SIZE] = {};
  curl::SlistPtr headers;
  Prepare(h.get(), path, token, headers, nullptr, errbuf);
  curl_easy_setopt(h.get(), CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(h.get(), CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(h.get(), CURLOPT_LOW_SPEED_TIME, static_cast<long>(options_.watch_low_speed_time.count()));
  StreamSink sink;
  sink.easy = h.get();
  sink.consume = &consume;
  sink.stop = stop;
  sink.closed = &closed_;
  curl_easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, &WriteStream);
  curl_easy_setopt(h.get(), CURLOPT_WRITEDATA, &sink);
  {
    curl::MultiAttachment attach(multi.get(), h.get());
    if (!attach.ok()) {
      end.done = CURLE_FAILED_INIT;
      end.error = "curl_multi_add_handle failed";
      return end;
    }
    end.done = Drive(multi.get(), stop, errbuf);
  }
  if (sink.stopped) end.done.reset();
  if (sink.http == 0) curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &sink.http);
  end.http = sink.http;
  end.error_body = std::move(sink.error_body);
  end.exception = std::move(sink.exception);
  if (end.done && *end.done != CURLE_OK)
    end.error = errbuf[0] != '\0' ? std::string(errbuf) : curl_easy_strerror(*end.done);
  return end;
}

// Drives the transfer attached to `multi` until it finishes (its result) or
// is stopped (nothing). A stop request or Close() wakes the wait at once.
std::optional<CURLcode> Transport::Drive(CURLM* multi, std::stop_token stop, char* errbuf) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (closed_.load()) return std::nullopt;
    streams_.insert(multi);
  }
  std::optional<CURLcode> done;
  {
    std::stop_callback wake(stop, [multi] { curl_multi_wakeup(multi); });
    for (;;) {
      if (stop.stop_requested() || closed_.load()) break;
      int running = 0;
      if (const CURLMcode mc = curl_multi_perform(multi, &running); mc != CURLM_OK) {
        std::snprintf(errbuf, CURL_ERROR_SIZE, "%s", curl_multi_strerror(mc));
        done = CURLE_RECV_ERROR;
        break;
      }
      int queued = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
        if (msg->msg == CURLMSG_DONE) done = msg->data.result;
      }
      if (done || running == 0) break;
      // libcurl shortens the wait to its own timers (the low-speed limit).
      curl_multi_poll(multi, nullptr, 0, 60'000, nullptr);
    }
  }
  std::lock_guard<std::mutex> g(mu_);
  streams_.erase(multi);
  return done;
}

void Transport::Close() {
  std::lock_guard<std::mutex> g(mu_);
  closed_.store(true);
  for (CURLM* m : streams_) curl_multi_wakeup(m);
}

}  // namespace ms::kube
