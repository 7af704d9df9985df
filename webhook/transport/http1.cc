#include "webhook/transport/http1.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <exception>

#include "base/strings.h"

namespace ms::http {

namespace {

// Optional white space around header values (RFC 9110 5.6.3).
constexpr std::string_view kOws = " \t";

bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), IsTokenChar); }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// True when the comma-separated header value lists `token` (lower case).
bool ListsToken(const std::string* value, std::string_view token) {
  if (!value) return false;
  std::string lower = Lower(*value);
  std::string_view rest(lower);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    if (Trim(rest.substr(0, comma), kOws) == token) return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

const std::string* Request::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers)
    if (name == lower_name) return &value;
  return nullptr;
}

const char* ReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Payload Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Entity";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

Connection::Connection(const Limits& limits, const Handler& handler, const RefusalHook& on_refusal,
                       std::string remote_addr, TimePoint now)
    : limits_(limits),
      handler_(handler),
      on_refusal_(on_refusal),
      remote_addr_(std::move(remote_addr)),
      request_start_(now),
      last_activity_(now) {}

void Connection::OnData(std::string_view data, TimePoint now) {
  if (closing_ || data.empty()) return;
  if (idle()) request_start_ = now;
  last_activity_ = now;
  input_.append(data);
  Process(now);
}

void Connection::OnTimer(TimePoint now) {
  if (closing_) return;
  if (idle()) {
    if (now >= last_activity_ + limits_.idle_timeout) closing_ = true;
  } else if (now >= request_start_ + limits_.read_timeout) {
    Refuse(408, "request not received in full within " + std::to_string(limits_.read_timeout.count()) + "ms");
  }
}

void Connection::OnPeerClosed() { closing_ = true; }

TimePoint Connection::deadline() const {
  return idle() ? last_activity_ + limits_.idle_timeout : request_start_ + limits_.read_timeout;
}

void Connection::Process(TimePoint now) {
  while (!closing_) {
    if (!head_ && !ParseHead()) return;
    if (closing_) return;
    if (input_.size() < body_length_) {
      const std::string* expect = head_->Header("expect");
      if (!sent_continue_ && expect && Lower(*expect) == "100-continue") {
        output_ += "HTTP/1.1 100 Continue\r\n\r\n";
        sent_continue_ = true;
      }
      return;
    }
    Request request = std::move(*head_);
    head_.reset();
    sent_continue_ = false;
    request.body.assign(input_, 0, body_length_);
    input_.erase(0, body_length_);
    const bool keep_alive = WantsKeepAlive(request);
    Response response;
    try {
      response = handler_(request);
    } catch (const std::exception& e) {
      response = Response{500, "text/plain; charset=utf-8", std::string("internal error: ") + e.what() + "\n", {}};
    }
    Answer(request, std::move(response), keep_alive);
    last_activity_ = now;
    request_start_ = now;  // a pipelined next request has started already
  }
}

bool Connection::ParseHead() {
  // Robustness (RFC 9112 2.2): empty lines before a request line are ignored.
  size_t skip = 0;
  while (skip < input_.size() && (input_[skip] == '\r' || input_[skip] == '\n')) ++skip;
  if (skip) input_.erase(0, skip);
  if (input_.empty()) return false;

  Request request;
  request.remote_addr = remote_addr_;
  // Refuses with what could be parsed of the request so far.
  auto refuse = [&](int status, std::string message) {
    head_ = std::move(request);
    Refuse(status, std::move(message));
    return false;
  };
  size_t pos = 0;
  bool first = true;
  for (;;) {
    const size_t nl = input_.find('\n', pos);
    if ((nl == std::string::npos ? input_.size() : nl + 1) > limits_.max_header_bytes)
      return refuse(431, "request line and headers exceed " + std::to_string(limits_.max_header_bytes) + " bytes");
    if (nl == std::string::npos) return false;
    std::string_view line(input_.data() + pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = nl + 1;

    if (first) {
      first = false;
      const size_t sp1 = line.find(' ');
      const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
      if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
        return refuse(400, "malformed request line");
      request.method = std::string(line.substr(0, sp1));
      request.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
      request.path = request.target.substr(0, request.target.find('?'));
      const std::string_view version = line.substr(sp2 + 1);
      if (!IsToken(request.method) || request.target.empty() || request.target.front() != '/')
        return refuse(400, "malformed request line");
      if (version == "HTTP/1.1") {
        request.minor_version = 1;
      } else if (version == "HTTP/1.0") {
        request.minor_version = 0;
      } else {
        const bool http = version.size() == 8 && version.substr(0, 5) == "HTTP/" && version[6] == '.';
        return refuse(http ? 505 : 400,
                      http ? "HTTP version not supported: HTTP/1.1 and HTTP/1.0 are" : "malformed request line");
      }
      continue;
    }
    if (line.empty()) break;  // end of the head
    if (line.front() == ' ' || line.front() == '\t') return refuse(400, "obsolete header line folding is not accepted");
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) return refuse(400, "malformed header line");
    if (request.headers.size() >= limits_.max_headers)
      return refuse(431, "more than " + std::to_string(limits_.max_headers) + " header fields");
    request.headers.emplace_back(Lower(line.substr(0, colon)), std::string(Trim(line.substr(colon + 1), kOws)));
  }
  input_.erase(0, pos);
  head_ = std::move(request);

  // Framing: Content-Length only.
  if (const std::string* te = head_->Header("transfer-encoding")) {
    Refuse(411, "Transfer-Encoding " + *te + " is not supported: send a Content-Length");
    return false;
  }
  body_length_ = 0;
  bool seen_length = false;
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
    if (seen_length && n != body_length_) {
      Refuse(400, "conflicting Content-Length headers");
      return false;
    }
    seen_length = true;
    body_length_ = static_cast<size_t>(n);
  }
  return true;
}

bool Connection::WantsKeepAlive(const Request& request) const {
  const std::string* connection = request.Header("connection");
  if (request.minor_version == 0) return ListsToken(connection, "keep-alive");
  return !ListsToken(connection, "close");
}

void Connection::Answer(const Request& request, Response response, bool keep_alive) {
  std::string& out = output_;
  out.reserve(out.size() + 160 + response.body.size());
  out += "HTTP/1.1 ";
  out += std::to_string(response.status);
  out += ' ';
  out += ReasonPhrase(response.status);
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
}

void Connection::Refuse(int status, std::string message) {
  Request request = head_ ? std::move(*head_) : Request{};
  head_.reset();
  request.remote_addr = remote_addr_;
  Response response{status, "text/plain; charset=utf-8", std::move(message) + "\n", {}};
  if (on_refusal_) on_refusal_(request, response);
  // After a refusal the framing of what follows is unknown: answer and close.
  Answer(request, std::move(response), false);
  input_.clear();
}

}  // namespace ms::http
