#include "controller/kube/http_client.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "controller/kube/curl_handles.h"
#include "controller/kube/paths.h"
#include "controller/kube/rate_limiter.h"
#include "controller/kube/status.h"
#include "controller/kube/token_source.h"
#include "controller/kube/watch_decoder.h"

namespace ms::kube {

const char* PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
  }
  return "application/merge-patch+json";
}

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

bool IsWrite(std::string_view method) { return method != "GET"; }

struct WatchSink {
  CURL* easy = nullptr;
  const std::atomic<bool>* stop = nullptr;
  const std::atomic<bool>* closed = nullptr;
  WatchDecoder* decoder = nullptr;
  long http = 0;
  std::string error_body;
  bool consumer_stopped = false;
  bool stop_requested = false;
  std::string exception;  // what escaped an event handler, if anything
};

size_t WriteWatch(char* ptr, size_t size, size_t nmemb, void* userdata) {
  auto* sink = static_cast<WatchSink*>(userdata);
  return curl::Barrier(sink, [&]() -> size_t {
    const size_t n = size * nmemb;
    if (sink->http == 0) curl_easy_getinfo(sink->easy, CURLINFO_RESPONSE_CODE, &sink->http);
    if (sink->stop->load() || sink->closed->load()) {
      sink->stop_requested = true;
      return 0;
    }
    if (!Is2xx(sink->http)) {
      constexpr size_t kMaxErrorBody = 1u << 20;
      if (sink->error_body.size() < kMaxErrorBody) sink->error_body.append(ptr, std::min(n, kMaxErrorBody));
      return n;
    }
    // The event handlers run here, inside libcurl's callback.
    if (!sink->decoder->Feed(std::string_view(ptr, n))) {
      sink->consumer_stopped = true;
      return 0;
    }
    return n;
  });
}

}  // namespace

struct HttpClient::Impl {
  Impl(RestConfig c, const Clock& clk, ClientMetrics& m, std::shared_ptr<spdlog::logger> log, HttpClientOptions o)
      : config(std::move(c)),
        clock(clk),
        logger(std::move(log)),
        options(o),
        tokens(config.bearer_token, config.token_file, clk),
        host(HostPort(config.server)),
        requests(m.requests) {
    while (!config.server.empty() && config.server.back() == '/') config.server.pop_back();
  }

  // Pool of idle easy handles.
  curl::EasyPtr Acquire() {
    {
      std::lock_guard<std::mutex> g(pool_mu);
      if (!pool.empty()) {
        curl::EasyPtr h = std::move(pool.back());
        pool.pop_back();
        return h;
      }
    }
    return curl::EasyPtr(curl_easy_init());
  }
  void Release(curl::EasyPtr h) {
    std::lock_guard<std::mutex> g(pool_mu);
    if (pool.size() < options.max_idle_handles) pool.push_back(std::move(h));
  }

  // Every label value comes from a closed set: method from this file's
  // verbs, host from the configuration, code from the answer's status line
  // (a number the server chose: outside 100-599 it is not HTTP and counts
  // as UNKNOWN) or "<error>" when there was no answer.
  void Count(long http, const std::string& method) {
    const std::string code = http == 0 ? "<error>" : http >= 100 && http <= 599 ? std::to_string(http) : "UNKNOWN";
    requests.Add({{"code", code}, {"method", method}, {"host", host}}).Increment();
  }

  // Options every request shares. `headers` and `errbuf` must outlive the transfer.
  void SetCommon(CURL* h, const std::string& path, const std::string& token, curl::SlistPtr& headers,
                 const char* content_type, char* errbuf) {
    curl_easy_reset(h);
    const std::string url = config.server + (path.empty() || path.front() != '/' ? "/" : "") + path;
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_USERAGENT, config.user_agent.c_str());
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout.count()));
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 15L);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    // HTTP/1.1: each pooled handle keeps its own connection, so HTTP/2's
    // multiplexing would bring nothing but its framing (about a tenth of the
    // controller's CPU, measured).
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));

    if (!config.ca_pem.empty()) {
      curl_blob blob{const_cast<char*>(config.ca_pem.data()), config.ca_pem.size(), CURL_BLOB_COPY};
      curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
    }
    if (!config.client_cert_pem.empty()) {
      curl_blob blob{const_cast<char*>(config.client_cert_pem.data()), config.client_cert_pem.size(), CURL_BLOB_COPY};
      curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &blob);
      curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    }
    if (!config.client_key_pem.empty()) {
      curl_blob blob{const_cast<char*>(config.client_key_pem.data()), config.client_key_pem.size(), CURL_BLOB_COPY};
      curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &blob);
      curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (config.insecure_skip_tls_verify) {
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }

    curl::Append(headers, "Accept: application/json");
    if (content_type != nullptr) curl::Append(headers, (std::string("Content-Type: ") + content_type).c_str());
    if (!token.empty()) curl::Append(headers, ("Authorization: Bearer " + token).c_str());
    curl::Append(headers, "Expect:");  // no 100-continue round trip for large bodies
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  }

  // One request as the caller asked for it.
  struct Call {
    const char* method;
    const std::string& path;
    const nlohmann::json* body = nullptr;
    const char* content_type = nullptr;
    std::optional<Clock::TimePoint> deadline;  // else options.request_timeout
  };

  struct Raw {
    CURLcode curl = CURLE_OK;
    long http = 0;
    std::string body;
    std::string error;
    const char* not_sent = nullptr;  // a kReason*: refused before a byte of it left
    const char* aborted = nullptr;   // a kReason*: cut short in flight
  };

  // Why `call` may not leave the process now (a kReason*), or null. Asked
  // before the request is prepared, again right before libcurl sends it and
  // while it is in flight.
  const char* Refusal(const Call& call) const {
    if (closed.load()) return kReasonClosed;
    if (call.deadline && clock.Now() >= *call.deadline) return kReasonDeadline;
    if (options.write_gate != nullptr && IsWrite(call.method) &&
        options.write_gate->WriteTimeLeft() <= Clock::Duration::zero()) {
      return kReasonNotLeader;
    }
    return nullptr;
  }

  // The whole request's time limit: the options', shortened by the call's
  // deadline and, for a write, by the gate's time left (so that a write in
  // flight ends when the gate closes). `bound` is the kReason* of the limit
  // that set it (null: the options' request timeout).
  struct TimeLimit {
    Clock::Duration limit;
    const char* bound = nullptr;
  };
  TimeLimit LimitOf(const Call& call) const {
    TimeLimit t{options.request_timeout};
    if (call.deadline && *call.deadline - clock.Now() < t.limit) t = {*call.deadline - clock.Now(), kReasonDeadline};
    if (options.write_gate != nullptr && IsWrite(call.method)) {
      const Clock::Duration left = options.write_gate->WriteTimeLeft();
      if (left < t.limit) t = {left, kReasonNotLeader};
    }
    return t;
  }

  // The callbacks' view of one transfer.
  struct Transfer {
    const Impl* impl;
    const Call* call;
    const char* refused = nullptr;  // set by a callback that stopped the transfer
    bool sent = false;              // the pre-request callback let it go
  };
  static int OnPrereq(void* userdata, char*, char*, int, int) {
    auto* t = static_cast<Transfer*>(userdata);
    t->refused = t->impl->Refusal(*t->call);
    if (t->refused != nullptr) return CURL_PREREQFUNC_ABORT;
    t->sent = true;
    return CURL_PREREQFUNC_OK;
  }
  static int OnProgress(void* userdata, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    auto* t = static_cast<Transfer*>(userdata);
    t->refused = t->impl->Refusal(*t->call);
    return t->refused != nullptr ? 1 : 0;  // non-zero aborts (CURLE_ABORTED_BY_CALLBACK)
  }

  Raw Perform(const Call& call, const std::string* body) {
    Raw raw;
    const TimeLimit time_limit = LimitOf(call);
    const Clock::Duration limit = time_limit.limit;
    if (const char* why = Refusal(call); why != nullptr || limit <= Clock::Duration::zero()) {
      raw.not_sent = why != nullptr ? why : (call.deadline ? kReasonDeadline : kReasonNotLeader);
      return raw;
    }
    curl::EasyPtr h = Acquire();
    if (!h) {
      raw.curl = CURLE_OUT_OF_MEMORY;
      raw.error = "curl_easy_init failed";
      return raw;
    }
    char errbuf[CURL_ERROR_SIZE] = {};
    curl::SlistPtr headers;
    SetCommon(h.get(), call.path, tokens.Token(), headers, call.content_type, errbuf);
    const auto limit_ms = std::chrono::ceil<std::chrono::milliseconds>(limit).count();
    curl_easy_setopt(h.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<int64_t>(1, limit_ms)));
    Transfer transfer{this, &call};
    curl_easy_setopt(h.get(), CURLOPT_PREREQFUNCTION, &OnPrereq);
    curl_easy_setopt(h.get(), CURLOPT_PREREQDATA, &transfer);
    curl_easy_setopt(h.get(), CURLOPT_XFERINFOFUNCTION, &OnProgress);
    curl_easy_setopt(h.get(), CURLOPT_XFERINFODATA, &transfer);
    curl_easy_setopt(h.get(), CURLOPT_NOPROGRESS, 0L);
    // gzip for large lists (not for watches: a compressor may hold events back).
    curl_easy_setopt(h.get(), CURLOPT_ACCEPT_ENCODING, "");
    if (std::string_view(call.method) == "GET") {
      curl_easy_setopt(h.get(), CURLOPT_HTTPGET, 1L);
    } else {
      curl_easy_setopt(h.get(), CURLOPT_CUSTOMREQUEST, call.method);
    }
    if (body != nullptr) {
      curl_easy_setopt(h.get(), CURLOPT_POSTFIELDS, body->data());
      curl_easy_setopt(h.get(), CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
    }
    curl::BoundedBody sink(options.max_response_bytes);
    sink.AttachTo(h.get());
    raw.curl = curl_easy_perform(h.get());
    curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &raw.http);
    if (raw.curl != CURLE_OK) {
      // Stopped by a callback, or by the time limit the deadline or the gate set.
      const char* why = transfer.refused != nullptr ? transfer.refused : Refusal(call);
      // libcurl's timer may end the transfer a moment before the gate or the
      // deadline that set its limit is past by our clock: the same cause.
      if (why == nullptr && raw.curl == CURLE_OPERATION_TIMEDOUT) why = time_limit.bound;
      if (why != nullptr) (transfer.sent ? raw.aborted : raw.not_sent) = why;
      raw.error = sink.Failure();
      if (raw.error.empty()) raw.error = errbuf[0] != '\0' ? std::string(errbuf) : curl_easy_strerror(raw.curl);
    }
    raw.body = std::move(sink.data);
    Release(std::move(h));
    return raw;
  }

  // client-go gives each API group-version its own REST client, hence its
  // own token bucket: the ModelServices' writes never wait for the
  // Deployments' tokens.
  TokenBucketRateLimiter& Limiter(const std::string& path) {
    std::string gv = GroupVersionOf(path);
    std::lock_guard<std::mutex> g(limiters_mu);
    auto& slot = limiters[std::move(gv)];
    if (!slot) slot = std::make_unique<TokenBucketRateLimiter>(config.qps, config.burst, clock);
    return *slot;
  }

  static const char* Explain(const char* reason) {
    if (reason == kReasonNotLeader) return "this process does not hold the leader Lease";
    if (reason == kReasonClosed) return "the client is closed";
    return "the request's deadline has passed";
  }

  Result Do(const Call& call) {
    Result r;
    TokenBucketRateLimiter& limiter = Limiter(call.path);
    const bool limited = call.deadline ? limiter.WaitBefore(*call.deadline) : limiter.Wait(&closed);
    if (!limited) {
      r.error = Status{0, call.deadline ? kReasonDeadline : kReasonClosed, "not sent: rate limited past the deadline"};
      return r;
    }
    std::string payload;
    if (call.body != nullptr) payload = call.body->dump();
    const std::string* body = call.body != nullptr ? &payload : nullptr;
    Raw raw = Perform(call, body);
    if (raw.curl == CURLE_OK && raw.not_sent == nullptr && raw.http == 401 && tokens.has_file() && tokens.Refresh()) {
      if (logger) logger->info("401 from {}: retrying with the re-read token from {}", host, config.token_file);
      Count(raw.http, call.method);
      raw = Perform(call, body);
    }
    if (raw.not_sent != nullptr) {
      r.error = Status{0, raw.not_sent, std::string("not sent: ") + Explain(raw.not_sent)};
      if (logger) logger->debug("{} {}: {}", call.method, call.path, r.error->message);
      return r;
    }
    if (raw.curl != CURLE_OK) {
      Count(0, call.method);
      r.code = 0;
      if (raw.aborted != nullptr) {
        r.error = Status{0, raw.aborted, std::string("aborted in flight: ") + Explain(raw.aborted)};
      } else {
        r.error = TransportError(raw.error);
      }
      if (logger) logger->debug("{} {}: {}", call.method, call.path, r.error->message);
      return r;
    }
    Count(raw.http, call.method);
    r.code = static_cast<int>(raw.http);
    if (logger) logger->trace("{} {} -> {}", call.method, call.path, raw.http);
    if (!Is2xx(raw.http)) {
      r.error = StatusFromBody(raw.body, r.code);
      return r;
    }
    if (raw.body.empty()) {
      r.body = nlohmann::json::object();
      return r;
    }
    r.body = ParseApiJson(raw.body);
    if (r.body.is_discarded()) {
      r.body = nullptr;
      r.error = Status{r.code, "InvalidResponse", "the response is not valid JSON"};
    }
    return r;
  }

  Result Watch(const std::string& path, const std::function<bool(const WatchEvent&)>& on_event,
               const std::atomic<bool>& stop) {
    Result r;
    curl::EasyPtr h(curl_easy_init());
    curl::MultiPtr multi(curl_multi_init());
    if (!h || !multi) {
      r.error = TransportError("curl init failed");
      return r;
    }
    char errbuf[CURL_ERROR_SIZE] = {};
    curl::SlistPtr headers;
    SetCommon(h.get(), path, tokens.Token(), headers, nullptr, errbuf);
    curl_easy_setopt(h.get(), CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(h.get(), CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h.get(), CURLOPT_LOW_SPEED_TIME, static_cast<long>(options.watch_low_speed_time.count()));

    WatchDecoder decoder(on_event, [&](const std::string& msg) {
      if (logger) logger->warn("watch {}: {}", path, msg);
    });
    WatchSink sink;
    sink.easy = h.get();
    sink.stop = &stop;
    sink.closed = &closed;
    sink.decoder = &decoder;
    curl_easy_setopt(h.get(), CURLOPT_WRITEFUNCTION, &WriteWatch);
    curl_easy_setopt(h.get(), CURLOPT_WRITEDATA, &sink);

    std::optional<CURLcode> done;
    {
      curl::MultiAttachment attach(multi.get(), h.get());
      if (!attach.ok()) {
        r.error = TransportError("curl_multi_add_handle failed");
        return r;
      }
      done = RunWatch(multi.get(), stop, errbuf);
    }
    if (sink.http == 0) curl_easy_getinfo(h.get(), CURLINFO_RESPONSE_CODE, &sink.http);
    Count(sink.http, "GET");
    return WatchResult(path, sink, done, stop, errbuf);
  }

  // Drives the watch attached to `multi` until it finishes (its result) or
  // the caller stops it or Close() (nothing).
  std::optional<CURLcode> RunWatch(CURLM* multi, const std::atomic<bool>& stop, char* errbuf) const {
    const int poll_ms = static_cast<int>(std::max<long>(1, options.watch_poll_interval.count()));
    while (!stop.load() && !closed.load()) {
      int running = 0;
      if (const CURLMcode mc = curl_multi_perform(multi, &running); mc != CURLM_OK) {
        std::snprintf(errbuf, CURL_ERROR_SIZE, "%s", curl_multi_strerror(mc));
        return CURLE_RECV_ERROR;
      }
      std::optional<CURLcode> done;
      int queued = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
        if (msg->msg == CURLMSG_DONE) done = msg->data.result;
      }
      if (done || running == 0) return done;
      curl_multi_poll(multi, nullptr, 0, poll_ms, nullptr);
    }
    return std::nullopt;
  }

  // What the caller learns of a watch that ended: nothing when it was
  // stopped or the stream ended well, else the error.
  Result WatchResult(const std::string& path, WatchSink& sink, std::optional<CURLcode> done,
                     const std::atomic<bool>& stop, const char* errbuf) const {
    Result r;
    r.code = static_cast<int>(sink.http);
    if (!sink.exception.empty()) {
      r.code = 0;
      r.error = TransportError("watch event handler failed: " + sink.exception);
      if (logger) logger->error("watch {}: {}", path, r.error->message);
      return r;
    }
    if (!done || stop.load() || closed.load() || sink.stop_requested || sink.consumer_stopped) {
      return r;  // stopped by the caller: not an error
    }
    if (*done == CURLE_OK && Is2xx(sink.http)) {
      sink.decoder->Finish();
      return r;
    }
    if (sink.http != 0 && !Is2xx(sink.http)) {
      r.error = StatusFromBody(sink.error_body, r.code);
      return r;
    }
    r.code = 0;
    r.error = TransportError(errbuf[0] != '\0' ? std::string(errbuf) : curl_easy_strerror(*done));
    if (logger) logger->debug("watch {}: {}", path, r.error->message);
    return r;
  }

  RestConfig config;
  const Clock& clock;
  std::shared_ptr<spdlog::logger> logger;
  HttpClientOptions options;
  TokenSource tokens;
  std::string host;
  std::mutex limiters_mu;
  std::map<std::string, std::unique_ptr<TokenBucketRateLimiter>> limiters;  // by group-version
  prometheus::Family<prometheus::Counter>& requests;
  std::mutex pool_mu;
  std::vector<curl::EasyPtr> pool;
  std::atomic<bool> closed{false};
};

HttpClient::HttpClient(RestConfig config, const Clock& clock, ClientMetrics& metrics,
                       std::shared_ptr<spdlog::logger> logger, HttpClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(config), clock, metrics, std::move(logger), options)) {}

HttpClient::~HttpClient() = default;

Result HttpClient::Get(const std::string& path) { return impl_->Do({"GET", path, nullptr, nullptr, std::nullopt}); }
Result HttpClient::List(const std::string& path) { return impl_->Do({"GET", path, nullptr, nullptr, std::nullopt}); }
Result HttpClient::Create(const std::string& path, const nlohmann::json& body) {
  return impl_->Do({"POST", path, &body, "application/json", std::nullopt});
}
Result HttpClient::Update(const std::string& path, const nlohmann::json& body) {
  return impl_->Do({"PUT", path, &body, "application/json", std::nullopt});
}
Result HttpClient::Patch(const std::string& path, PatchType type, const nlohmann::json& patch) {
  return impl_->Do({"PATCH", path, &patch, PatchContentType(type), std::nullopt});
}
Result HttpClient::Delete(const std::string& path) {
  return impl_->Do({"DELETE", path, nullptr, nullptr, std::nullopt});
}
Result HttpClient::GetBefore(const std::string& path, Clock::TimePoint deadline) {
  return impl_->Do({"GET", path, nullptr, nullptr, deadline});
}
Result HttpClient::CreateBefore(const std::string& path, const nlohmann::json& body, Clock::TimePoint deadline) {
  return impl_->Do({"POST", path, &body, "application/json", deadline});
}
Result HttpClient::UpdateBefore(const std::string& path, const nlohmann::json& body, Clock::TimePoint deadline) {
  return impl_->Do({"PUT", path, &body, "application/json", deadline});
}
void HttpClient::Close() { impl_->closed.store(true); }
Result HttpClient::Watch(const std::string& path, const std::function<bool(const WatchEvent&)>& on_event,
                         const std::atomic<bool>& stop) {
  return impl_->Watch(path, on_event, stop);
}
const std::string& HttpClient::host() const { return impl_->host; }

}  // namespace ms::kube
