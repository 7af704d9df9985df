#include "controller/kube/http_client.h"

#include <chrono>
#include <optional>
#include <string_view>

#include "controller/kube/api_json.h"
#include "controller/kube/status.h"
#include "controller/kube/watch_decoder.h"

namespace ms::kube {

const char* PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
  }
  return "application/merge-patch+json";
}

const char* Call::Method() const {
  switch (verb) {
    case Verb::kGet:
    case Verb::kList:
      return "GET";
    case Verb::kCreate:
      return "POST";
    case Verb::kUpdate:
      return "PUT";
    case Verb::kPatch:
      return "PATCH";
    case Verb::kDelete:
      return "DELETE";
  }
  return "GET";
}

namespace {

bool Is2xx(long code) { return code >= 200 && code < 300; }

const char* ContentType(Call::Verb verb) {
  if (verb == Call::Verb::kPatch) return PatchContentType(PatchType::kMerge);
  // POST, PUT and a DELETE with its DeleteOptions.
  if (verb == Call::Verb::kCreate || verb == Call::Verb::kUpdate || verb == Call::Verb::kDelete)
    return "application/json";
  return nullptr;
}

}  // namespace

HttpClient::HttpClient(RestConfig config, const clock::Clock& clock, ClientMetrics& metrics,
                       std::shared_ptr<spdlog::logger> logger, HttpClientOptions options)
    : token_file_(config.token_file),
      logger_(std::move(logger)),
      tokens_(config.bearer_token, config.token_file, clock),
      transport_(config, options.transport),
      policy_(config.qps, config.burst, clock, options.request_timeout, options.write_gate),
      requests_(metrics.requests) {}

void HttpClient::Close() {
  policy_.Close();
  transport_.Close();
}

// Every label value comes from a closed set: method from Call::Method(),
// host from the configuration, code from the answer's status line (a number
// the server chose: outside 100-599 it is not HTTP and counts as UNKNOWN) or
// "<error>" when there was no answer.
void HttpClient::Count(long http, const char* method) {
  const std::string code = http == 0 ? "<error>" : http >= 100 && http <= 599 ? std::to_string(http) : "UNKNOWN";
  requests_.Add({{"code", code}, {"method", method}, {"host", transport_.host()}}).Increment();
}

Answer HttpClient::Send(const Call& call, const std::string* body) {
  const RequestPolicy::TimeLimit time_limit = policy_.LimitOf(call);
  if (const char* why = policy_.Refusal(call); why != nullptr || time_limit.limit <= clock::Clock::Duration::zero()) {
    Answer refused;
    refused.curl = CURLE_ABORTED_BY_CALLBACK;
    refused.stopped_by = why != nullptr ? why : (call.deadline ? kReasonDeadline : kReasonNotLeader);
    return refused;
  }
  const std::string token = tokens_.Token();
  const char* content_type = body != nullptr ? ContentType(call.verb) : nullptr;
  Answer a = transport_.Send({call.Method(), call.path, body, content_type, token, time_limit.limit,
                              [this, &call] { return policy_.Refusal(call); }});
  if (a.curl != CURLE_OK && a.stopped_by == nullptr) {
    // libcurl's timer may end the transfer a moment before the gate or the
    // deadline that set its limit is past by our clock: the same cause.
    a.stopped_by = policy_.Refusal(call);
    if (a.stopped_by == nullptr && a.curl == CURLE_OPERATION_TIMEDOUT) a.stopped_by = time_limit.bound;
  }
  return a;
}

Result HttpClient::Do(const Call& call) {
  std::optional<std::string> payload;
  if (call.body != nullptr) payload = call.body->dump();
  const std::string* body = payload ? &*payload : nullptr;
  for (int retries = 0;; ++retries) {
    if (const char* why = policy_.Admit(call); why != nullptr) {
      Result r;
      r.error = Status{0, why, "not sent: rate limited past the deadline"};
      return r;
    }
    Answer a = Send(call, body);
    if (a.curl == CURLE_OK && a.http == 401 && !token_file_.empty() && tokens_.Refresh()) {
      if (logger_) logger_->info("401 from {}: retrying with the re-read token from {}", host(), token_file_);
      Count(a.http, call.Method());
      a = Send(call, body);
    }
    // The server did not take it and says when to come back (client-go's
    // checkWait): wait and send it again, unless that passes the deadline.
    if (!a.retry_after || retries >= kMaxRetries) return Decode(call, std::move(a));
    if (logger_)
      logger_->debug("{} {}: {}, Retry-After {} s", call.Method(), call.path, a.http,
                     std::chrono::duration_cast<std::chrono::seconds>(*a.retry_after).count());
    if (!policy_.AwaitRetry(call, *a.retry_after)) return Decode(call, std::move(a));
    Count(a.http, call.Method());
  }
}

Result HttpClient::Decode(const Call& call, Answer a) {
  Result r;
  if (a.curl != CURLE_OK && a.stopped_by != nullptr && !a.sent) {
    r.error = Status{0, a.stopped_by, std::string("not sent: ") + RequestPolicy::Explain(a.stopped_by)};
    if (logger_) logger_->debug("{} {}: {}", call.Method(), call.path, r.error->message);
    return r;
  }
  if (a.curl != CURLE_OK) {
    Count(0, call.Method());
    r.error = a.stopped_by != nullptr
                  ? Status{0, a.stopped_by, std::string("aborted in flight: ") + RequestPolicy::Explain(a.stopped_by)}
                  : TransportError(a.error);
    if (a.too_large) r.error->reason = kReasonTooLarge;
    if (logger_) logger_->debug("{} {}: {}", call.Method(), call.path, r.error->message);
    return r;
  }
  Count(a.http, call.Method());
  r.code = static_cast<int>(a.http);
  r.body_bytes = a.body.size();
  if (logger_) logger_->trace("{} {} -> {}", call.Method(), call.path, a.http);
  if (!Is2xx(a.http)) {
    r.error = StatusFromBody(a.body, r.code);
  } else if (a.body.empty()) {
    r.body = nlohmann::json::object();
  } else if (r.body = ParseApiJson(a.body, call.annotations); r.body.is_discarded()) {
    r.body = nullptr;
    r.error = Status{r.code, "InvalidResponse", "the response is not valid JSON"};
  }
  return r;
}

Result HttpClient::Watch(const std::string& path, const WatchHandler& on_event, std::stop_token stop) {
  return WatchKeeping(path, nullptr, on_event, stop);
}

Result HttpClient::WatchKeeping(const std::string& path, const KeptAnnotations* annotations,
                                const WatchHandler& on_event, std::stop_token stop) {
  WatchDecoder decoder(
      on_event,
      [&](const std::string& msg) {
        if (logger_) logger_->warn("watch {}: {}", path, msg);
      },
      WatchDecoder::kDefaultMaxLine, annotations);
  StreamEnd end = transport_.Stream(
      path, tokens_.Token(), [&decoder](std::string_view chunk) { return decoder.Feed(chunk); }, stop);
  Count(end.http, "GET");
  Result r;
  r.code = static_cast<int>(end.http);
  if (!end.exception.empty()) {
    r.code = 0;
    r.error = TransportError("watch event handler failed: " + end.exception);
    if (logger_) logger_->error("watch {}: {}", path, r.error->message);
    return r;
  }
  if (!end.done || stop.stop_requested() || transport_.closed()) return r;  // stopped: not an error
  if (*end.done == CURLE_OK && Is2xx(end.http)) {
    decoder.Finish();
    return r;
  }
  if (end.http != 0 && !Is2xx(end.http)) {
    r.error = StatusFromBody(end.error_body, r.code);
    return r;
  }
  r.code = 0;
  r.error = TransportError(end.error);
  if (logger_) logger_->debug("watch {}: {}", path, r.error->message);
  return r;
}

}  // namespace ms::kube
