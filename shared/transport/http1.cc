#include "shared/transport/http1.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <exception>

#include "shared/text/strings.h"
#include "shared/text/utf8.h"
#include "shared/transport/http1_text.h"

namespace ms::transport {

const std::string* Request::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers)
    if (name == lower_name) return &value;
  return nullptr;
}

Connection::Connection(const Limits& limits, const Handler& handler, const RefusalHook& on_refusal,
                       std::string remote_addr, TimePoint now, const clock::Clock& clock, BodyBudget* bodies)
    : limits_(limits),
      handler_(handler),
      on_refusal_(on_refusal),
      clock_(clock),
      bodies_(bodies),
      remote_addr_(std::move(remote_addr)),
      request_start_(now),
      last_activity_(now) {}

void Connection::OnData(std::string_view data, TimePoint now) {
  if (closing_ || data.empty()) return;
  // The idle timeout counts from the last answer, not the last byte: empty
  // lines between requests (skipped) do not keep a connection open.
  if (idle()) request_start_ = now;
  input_.append(data);
  Process(now);
  HoldOutput();
}

void Connection::OnTimer(TimePoint now) {
  if (closing_) return;
  if (idle()) {
    if (now >= last_activity_ + limits_.idle_timeout) closing_ = true;
  } else if (now >= request_start_ + limits_.read_timeout) {
    Refuse(408, "request not received in full within " + std::to_string(limits_.read_timeout.count()) + "ms");
  } else if (head_ && limits_.body_timeout.count() > 0 && now >= body_start_ + limits_.body_timeout) {
    Refuse(408, "request body not received within " + std::to_string(limits_.body_timeout.count()) + "ms of its head");
  }
  HoldOutput();
}

void Connection::OnPeerClosed() {
  closing_ = true;
  // What was received of an unfinished request will never be answered.
  body_lease_.Release();
  input_ = std::string();
}

TimePoint Connection::deadline() const {
  if (idle()) return last_activity_ + limits_.idle_timeout;
  const TimePoint read_by = request_start_ + limits_.read_timeout;
  if (!head_ || limits_.body_timeout.count() <= 0) return read_by;
  return std::min(read_by, body_start_ + limits_.body_timeout);
}

void Connection::HoldOutput() {
  if (bodies_ && output_.size() > output_lease_.bytes()) output_lease_ = bodies_->Hold(remote_addr_, output_.size());
}

void Connection::Process(TimePoint now) {
  while (!closing_) {
    if (!head_) {
      if (!ParseHead()) return;
      body_start_ = now;
    }
    if (closing_) return;
    if (input_.size() < body_length_) {
      const std::string* expect = head_->Header("expect");
      // HTTP/1.0 clients do not know 100 Continue (RFC 9110 10.1.1).
      if (!sent_continue_ && head_->minor_version == 1 && expect && Lower(*expect) == "100-continue") {
        output_ += "HTTP/1.1 100 Continue\r\n\r\n";
        sent_continue_ = true;
      }
      return;
    }
    Request request = std::move(*head_);
    head_.reset();
    sent_continue_ = false;
    if (input_.size() == body_length_) {
      request.body = std::move(input_);  // its buffer, without a copy
      input_ = std::string();
    } else {
      request.body.assign(input_, 0, body_length_);
      input_.erase(0, body_length_);
    }
    Response response;
    try {
      response = handler_(request);
    } catch (const std::exception& e) {
      response = Response{500, "text/plain; charset=utf-8", std::string("internal error: ") + e.what() + "\n", {}};
    }
    const bool keep_alive = !response.close && !close_after_answer_ && WantsKeepAlive(request);
    Answer(request, std::move(response), keep_alive);
    body_lease_.Release();
    last_activity_ = now;
    request_start_ = now;  // a pipelined next request has started already
  }
}

bool Connection::ParseHead() {
  if (scan_pos_ == 0 && !SkipEmptyLines()) return false;
  const size_t head_end = ScanForHeadEnd();

  Request request;
  request.remote_addr = remote_addr_;
  // Refuses with what could be parsed of the request so far.
  auto refuse = [&](int status, std::string message) {
    head_ = std::move(request);
    Refuse(status, std::move(message));
    return false;
  };
  if ((head_end == std::string::npos ? input_.size() : head_end) > limits_.max_header_bytes) {
    std::string ignored;
    ParseLines(std::string_view(input_).substr(0, line_start_), request, &ignored);
    return refuse(431, "request line and headers exceed " + std::to_string(limits_.max_header_bytes) + " bytes");
  }
  if (head_end == std::string::npos) return false;
  std::string message;
  if (const int status = ParseLines(std::string_view(input_).substr(0, head_end), request, &message))
    return refuse(status, std::move(message));
  scan_pos_ = line_start_ = 0;
  input_.erase(0, head_end);
  head_ = std::move(request);
  return ReadFraming();
}

bool Connection::SkipEmptyLines() {
  // Robustness (RFC 9112 2.2): empty lines before a request line are
  // ignored.
  size_t skip = 0;
  for (;;) {
    if (skip < input_.size() && input_[skip] == '\n') {
      skip += 1;
    } else if (skip + 1 < input_.size() && input_[skip] == '\r' && input_[skip + 1] == '\n') {
      skip += 2;
    } else {
      break;
    }
  }
  if (skip) input_.erase(0, skip);
  return !input_.empty() && input_ != "\r";
}

size_t Connection::ScanForHeadEnd() {
  size_t head_end = std::string::npos;
  while (head_end == std::string::npos) {
    const size_t nl = input_.find('\n', scan_pos_);
    const size_t scanned_to = nl == std::string::npos ? input_.size() : nl + 1;
    head_bytes_scanned_ += scanned_to - scan_pos_;
    scan_pos_ = scanned_to;
    if (nl == std::string::npos) break;
    const size_t length = nl - line_start_ - (nl > line_start_ && input_[nl - 1] == '\r' ? 1 : 0);
    if (length == 0 && line_start_ > 0) {
      head_end = nl + 1;
    } else {
      line_start_ = nl + 1;
    }
  }
  return head_end;
}

bool Connection::ReadFraming() {
  // Content-Length only.
  if (const std::string* te = head_->Header("transfer-encoding")) {
    Refuse(411, "Transfer-Encoding " + *te + " is not supported: send a Content-Length");
    return false;
  }
  body_length_ = 0;
  const std::string* seen_length = nullptr;
  for (const auto& [name, value] : head_->headers) {
    if (name != "content-length") continue;
    std::uint64_t n = 0;
    const char* first_char = value.data();
    const char* last_char = value.data() + value.size();
    auto [end, ec] = std::from_chars(first_char, last_char, n);
    if (value.empty() || end != last_char || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
      Refuse(400, "malformed Content-Length \"" + value + "\"");
      return false;
    }
    if (ec == std::errc::result_out_of_range || n > limits_.max_body_bytes) {
      Refuse(413, "request body too large: Content-Length " + value + ", the limit is " +
                      std::to_string(limits_.max_body_bytes) + " bytes");
      return false;
    }
    // Repeated Content-Length lines must be the same text ("3" and "03"
    // conflict), as Go's server and h11 require.
    if (seen_length && *seen_length != value) {
      Refuse(400, "conflicting Content-Length headers");
      return false;
    }
    seen_length = &value;
    body_length_ = static_cast<size_t>(n);
  }
  return ReserveBody();
}

bool Connection::ReserveBody() {
  if (!bodies_ || body_length_ == 0) return true;
  auto lease = bodies_->Reserve(remote_addr_, body_length_);
  if (!lease) {
    Refuse(503,
           "too many request bodies in flight: " + std::to_string(body_length_) + " bytes do not fit in the " +
               std::to_string(bodies_->limit()) + "-byte budget now; retry",
           {{"Retry-After", "1"}});
    return false;
  }
  body_lease_ = std::move(*lease);
  // The body is held in input_: its memory once, not grown by doubling.
  input_.reserve(std::max(input_.size(), body_length_));
  return true;
}

void Connection::ReleaseBuffers() {
  constexpr size_t kKept = 16 * 1024;
  if (input_.empty() && input_.capacity() > kKept) input_ = std::string();
  if (output_.empty() && output_.capacity() > kKept) output_ = std::string();
  if (output_.empty()) output_lease_.Release();
}

int Connection::ParseLines(std::string_view head, Request& request, std::string* message) const {
  auto refusal = [&](int status, std::string text) {
    *message = std::move(text);
    return status;
  };
  bool first = true;
  size_t host_headers = 0;
  while (!head.empty()) {
    const size_t nl = head.find('\n');
    if (nl == std::string_view::npos) break;
    std::string_view line = head.substr(0, nl);
    head.remove_prefix(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);

    if (first) {
      first = false;
      const size_t sp1 = line.find(' ');
      const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
      if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
        return refusal(400, "malformed request line");
      request.method = std::string(line.substr(0, sp1));
      request.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
      request.path = request.target.substr(0, request.target.find('?'));
      const std::string_view version = line.substr(sp2 + 1);
      if (!IsToken(request.method) || !IsTarget(request.target)) return refusal(400, "malformed request line");
      if (version == "HTTP/1.1") {
        request.minor_version = 1;
      } else if (version == "HTTP/1.0") {
        request.minor_version = 0;
      } else {
        const bool http = version.size() == 8 && version.substr(0, 5) == "HTTP/" && version[6] == '.';
        return refusal(http ? 505 : 400,
                       http ? "HTTP version not supported: HTTP/1.1 and HTTP/1.0 are" : "malformed request line");
      }
      continue;
    }
    if (line.empty()) break;  // end of the head
    if (line.front() == ' ' || line.front() == '\t')
      return refusal(400, "obsolete header line folding is not accepted");
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || !IsToken(line.substr(0, colon)))
      return refusal(400, "malformed header line");
    if (request.headers.size() >= limits_.max_headers)
      return refusal(431, "more than " + std::to_string(limits_.max_headers) + " header fields");
    std::string name = Lower(line.substr(0, colon));
    const std::string_view value = text::Trim(line.substr(colon + 1), kOws);
    if (!IsFieldValue(value)) return refusal(400, "invalid character in the value of header " + name);
    if (name == "host") ++host_headers;
    request.headers.emplace_back(std::move(name), std::string(value));
  }
  // RFC 9112 3.2: one Host in an HTTP/1.1 request, never two in any.
  if (!first && host_headers > 1) return refusal(400, "more than one Host header");
  if (!first && request.minor_version == 1 && host_headers == 0) return refusal(400, "missing Host header");
  return 0;
}

bool Connection::WantsKeepAlive(const Request& request) const {
  // Every Connection field line counts: several make one comma-separated
  // list (RFC 9110 5.3), so "Connection: x" then "Connection: close" closes.
  bool close = false, keep_alive = false;
  for (const auto& [name, value] : request.headers) {
    if (name != "connection") continue;
    close = close || ListsToken(&value, "close");
    keep_alive = keep_alive || ListsToken(&value, "keep-alive");
  }
  if (request.minor_version == 0) return keep_alive && !close;
  return !close;
}

void Connection::Answer(const Request& request, Response response, bool keep_alive) {
  std::string& out = output_;
  out.reserve(out.size() + 160 + response.body.size());
  out += "HTTP/1.1 ";
  out += std::to_string(response.status);
  out += ' ';
  out += ReasonPhrase(response.status);
  out += "\r\nDate: ";
  out += Date();
  out += "\r\nContent-Type: ";
  out += response.content_type;
  out += "\r\nContent-Length: ";
  out += std::to_string(response.body.size());
  out += "\r\n";
  for (const auto& [name, value] : response.headers) {
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
  if (!keep_alive) {
    out += "Connection: close\r\n";
  } else if (request.minor_version == 0) {
    out += "Connection: keep-alive\r\n";
  }
  out += "\r\n";
  if (request.method != "HEAD") out += response.body;
  if (!keep_alive) closing_ = true;
  ++answered_;
}

const std::string& Connection::Date() {
  const auto second = std::chrono::floor<std::chrono::seconds>(clock_.WallNow());
  if (date_.empty() || second != date_second_) {
    date_second_ = second;
    date_ = HttpDate(second);
  }
  return date_;
}

void Connection::Refuse(int status, std::string message, std::vector<std::pair<std::string, std::string>> headers) {
  Request request = head_ ? std::move(*head_) : Request{};
  head_.reset();
  request.remote_addr = remote_addr_;
  // The message may quote bytes the client sent: the body is UTF-8.
  Response response{status, "text/plain; charset=utf-8", text::SanitizeUtf8(message) + "\n", std::move(headers)};
  if (on_refusal_) on_refusal_(request, response);
  // After a refusal the framing of what follows is unknown: answer and close.
  Answer(request, std::move(response), false);
  body_lease_.Release();
  input_ = std::string();
  scan_pos_ = line_start_ = 0;
}

}  // namespace ms::transport
