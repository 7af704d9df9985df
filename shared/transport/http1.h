// HTTP/1.1 server-side protocol for one connection, as a state machine over
// bytes and time: no sockets, no TLS, no threads, so every framing rule,
// limit and timeout is unit-testable in virtual time. shared/transport/http_server.h
// moves the bytes.
//
// What it speaks: request line and headers (CRLF or bare LF), Content-Length
// bodies up to a limit, keep-alive (HTTP/1.1 default, HTTP/1.0 on request),
// pipelining (answers in order), Expect: 100-continue (HTTP/1.1 only), a
// Date header on every answer. Empty lines before a request are skipped but
// do not keep an idle connection open. What it refuses, with
// a plain-text answer and then closing the connection:
//   400  malformed request line, header or Content-Length; obs-fold; a
//        control character (NUL, a bare CR, ...) in a header value or the
//        request target; two Host headers, or none in HTTP/1.1
//   408  a request not received in full within the read timeout, or its
//        body not within the body timeout of its head
//   411  Transfer-Encoding (chunked bodies are not accepted: the body limit
//        must be known before reading)
//   413  Content-Length over the body limit (refused before the body is read)
//   503  the body would exceed the server's budget of bodies and answers
//        in flight (budget.h; refused before it is read, with Retry-After: 1)
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

#include "shared/clock/clock.h"
#include "shared/transport/budget.h"
#include "shared/transport/response.h"

namespace ms::transport {

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

// "OK", "Not Found", ...; "Unknown" for codes it does not list.
const char* ReasonPhrase(int status);

struct Limits {
  size_t max_header_bytes = 16 * 1024;
  size_t max_headers = 100;
  size_t max_body_bytes = 3 * 1024 * 1024;
  std::chrono::milliseconds read_timeout{10000};  // from a request's first byte to its last
  // From the end of a request's head to the last byte of its body: a body
  // announced and not sent holds its reservation in the budget this long
  // at most. 0: only the read timeout.
  std::chrono::milliseconds body_timeout{0};
  // Between requests on a kept-alive connection: longer than the API
  // server's own idle timeout (Go's http.Transport, 90 s), so the client
  // closes first and never sends a request on a connection closing under it.
  std::chrono::milliseconds idle_timeout{120000};
};

class Connection {
 public:
  // Answers a complete request.
  using Handler = std::function<Response(const Request&)>;
  // Told of each request the connection refused itself (see the table
  // above), with what it could parse of it (method, path, headers; the
  // request line may be empty).
  using RefusalHook = std::function<void(const Request&, const Response&)>;

  // `clock` gives the wall time of the Date header; the `now` arguments
  // below drive the timeouts. A body's Content-Length is reserved in
  // `bodies` (when given; it outlives the connection) until it is answered,
  // and answers are counted there until they are sent.
  Connection(const Limits& limits, const Handler& handler, const RefusalHook& on_refusal, std::string remote_addr,
             TimePoint now, const clock::Clock& clock, BodyBudget* bodies = nullptr);

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
  // Gives the memory of empty buffers back (after a large request or
  // answer, an idle kept-alive connection holds no more than a small one),
  // and, once output() is empty, the answers' share of the budget.
  void ReleaseBuffers();
  // Bytes the buffers hold (capacity), for tests.
  size_t buffer_capacity() const { return input_.capacity() + output_.capacity(); }
  // True once the connection should be closed after output() is sent.
  bool closing() const { return closing_; }
  // When OnTimer next has something to do.
  TimePoint deadline() const;
  // True between requests (no byte of a next request received).
  bool idle() const { return input_.empty() && !head_; }
  // Requests answered so far (refusals included).
  size_t answered() const { return answered_; }
  // The next answer closes the connection (Connection: close).
  void CloseAfterNextAnswer() { close_after_answer_ = true; }
  // Bytes of request heads examined so far: each byte once, however the
  // head is split (a test checks that parsing is linear).
  size_t head_bytes_scanned() const { return head_bytes_scanned_; }

 private:
  void Process(TimePoint now);
  // Parses the request head at the start of input_; false when incomplete.
  // Sets closing_ (after writing a refusal) on a bad head. Looks at each
  // byte once: the search for the head's end resumes at scan_pos_.
  bool ParseHead();
  // Its steps: drops empty lines before a request line (false: nothing
  // else yet); finds the end of the head from scan_pos_ (npos: not yet);
  // reads the framing of the body from head_ (false after a refusal).
  bool SkipEmptyLines();
  size_t ScanForHeadEnd();
  bool ReadFraming();
  // Reserves the body's length in the budget (false after a 503).
  bool ReserveBody();
  // Parses the complete lines of `head` into `request`; the status and
  // message of a refusal, or 0.
  int ParseLines(std::string_view head, Request& request, std::string* message) const;
  const std::string& Date();
  void Refuse(int status, std::string message, std::vector<std::pair<std::string, std::string>> headers = {});
  void Answer(const Request& request, Response response, bool keep_alive);
  // Counts what output_ holds in the budget (whatever its limit).
  void HoldOutput();
  bool WantsKeepAlive(const Request& request) const;

  const Limits& limits_;
  const Handler& handler_;
  const RefusalHook& on_refusal_;
  const clock::Clock& clock_;
  BodyBudget* bodies_;
  BodyBudget::Lease body_lease_;    // of the body being read
  BodyBudget::Lease output_lease_;  // of the answers in output_
  std::string remote_addr_;
  std::string input_;
  std::string output_;
  std::optional<Request> head_;  // parsed head of the request whose body is being read
  size_t scan_pos_ = 0;          // input_ before it holds no end of head
  size_t line_start_ = 0;        // start of the head line scan_pos_ is in
  size_t head_bytes_scanned_ = 0;
  size_t body_length_ = 0;
  size_t answered_ = 0;
  bool sent_continue_ = false;
  bool closing_ = false;
  bool close_after_answer_ = false;
  TimePoint request_start_{};
  TimePoint body_start_{};     // the end of the head of the request whose body is being read
  TimePoint last_activity_{};  // connection start or the last answer: the idle timeout counts from it
  std::chrono::system_clock::time_point date_second_{};
  std::string date_;  // the Date header value for date_second_
};

}  // namespace ms::transport
