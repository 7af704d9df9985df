// HTTP/1.1 server-side protocol for one connection, as a state machine over
// bytes and time: no sockets, no TLS, no threads, so every framing rule,
// limit and timeout is unit-testable in virtual time. webhook/transport/https_server.h
// moves the bytes.
//
// What it speaks: request line and headers (CRLF or bare LF), Content-Length
// bodies up to a limit, keep-alive (HTTP/1.1 default, HTTP/1.0 on request),
// pipelining (answers in order), Expect: 100-continue. What it refuses, with
// a plain-text answer and then closing the connection:
//   400  malformed request line, header or Content-Length; obs-fold
//   408  a request not received in full within the read timeout
//   411  Transfer-Encoding (chunked bodies are not accepted: the body limit
//        must be known before reading)
//   413  Content-Length over the body limit (refused before the body is read)
//   431  request line and headers over the header limit
//   505  an HTTP version other than 1.0 or 1.1
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ms::http {

using TimePoint = std::chrono::steady_clock::time_point;

struct Request {
  std::string method;
  std::string target;  // as sent: path and query
  std::string path;    // target without the query
  int minor_version = 1;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, values trimmed
  std::string body;
  std::string remote_addr;

  // The first header of that (lower-case) name, or nullptr.
  const std::string* Header(std::string_view lower_name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers, e.g. Allow
};

// "OK", "Not Found", ...; "Unknown" for codes it does not list.
const char* ReasonPhrase(int status);

struct Limits {
  size_t max_header_bytes = 16 * 1024;
  size_t max_headers = 100;
  size_t max_body_bytes = 3 * 1024 * 1024;
  std::chrono::milliseconds read_timeout{10000};  // from a request's first byte to its last
  std::chrono::milliseconds idle_timeout{30000};  // between requests on a kept-alive connection
};

class Connection {
 public:
  // Answers a complete request.
  using Handler = std::function<Response(const Request&)>;
  // Told of each request the connection refused itself (see the table
  // above), with what it could parse of it (method, path, headers; the
  // request line may be empty).
  using RefusalHook = std::function<void(const Request&, const Response&)>;

  Connection(const Limits& limits, const Handler& handler, const RefusalHook& on_refusal, std::string remote_addr,
             TimePoint now);

  // Takes received bytes; answers every request they complete, appending
  // the answers to output().
  void OnData(std::string_view data, TimePoint now);
  // Applies the timeouts: a partial request past the read timeout gets a
  // 408, an idle connection past the idle timeout is closed.
  void OnTimer(TimePoint now);
  // The peer closed its side: nothing more will arrive.
  void OnPeerClosed();

  // Bytes to send. The transport erases what it sent.
  std::string& output() { return output_; }
  // True once the connection should be closed after output() is sent.
  bool closing() const { return closing_; }
  // When OnTimer next has something to do.
  TimePoint deadline() const;
  // True between requests (no byte of a next request received).
  bool idle() const { return input_.empty() && !head_; }

 private:
  void Process(TimePoint now);
  // Parses the request head at the start of input_; false when incomplete.
  // Sets closing_ (after writing a refusal) on a bad head.
  bool ParseHead();
  void Refuse(int status, std::string message);
  void Answer(const Request& request, Response response, bool keep_alive);
  bool WantsKeepAlive(const Request& request) const;

  const Limits& limits_;
  const Handler& handler_;
  const RefusalHook& on_refusal_;
  std::string remote_addr_;
  std::string input_;
  std::string output_;
  std::optional<Request> head_;  // parsed head of the request whose body is being read
  size_t body_length_ = 0;
  bool sent_continue_ = false;
  bool closing_ = false;
  TimePoint request_start_{};
  TimePoint last_activity_{};
};

}  // namespace ms::http
