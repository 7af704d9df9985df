// The HTTP/1.1 connection state machine, fed bytes in virtual time: the
// exact answers a client reads, byte for byte.
#include "shared/transport/http1.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test/support/fake_clock.h"

namespace ms::transport {
namespace {

using namespace std::chrono_literals;
using namespace std::string_literals;

class Http1Test : public ::testing::Test {
 protected:
  Http1Test() {
    limits_.max_header_bytes = 256;
    limits_.max_headers = 5;
    limits_.max_body_bytes = 100;
    limits_.read_timeout = 2s;
    limits_.idle_timeout = 30s;
    clock_.SetWall(std::chrono::system_clock::from_time_t(1741064767));
  }

  Connection& Conn() {
    if (!conn_) conn_ = std::make_unique<Connection>(limits_, handler_, hook_, "10.0.0.7", t0_, clock_);
    return *conn_;
  }
  // Feeds bytes and returns (and clears) what the connection answered.
  std::string Feed(std::string_view bytes, std::chrono::milliseconds at = 0ms) {
    Conn().OnData(bytes, t0_ + at);
    return Take();
  }
  std::string Take() { return std::exchange(Conn().output(), std::string()); }

  Limits limits_;
  std::vector<Request> seen_;
  std::vector<std::pair<Request, Response>> refused_;
  Connection::Handler handler_ = [this](const Request& r) {
    seen_.push_back(r);
    return Response{
        200, "application/json", "{\"path\":\"" + r.path + "\",\"n\":" + std::to_string(seen_.size()) + "}", {}};
  };
  Connection::RefusalHook hook_ = [this](const Request& r, const Response& res) { refused_.emplace_back(r, res); };
  TimePoint t0_{std::chrono::seconds(1000)};
  FakeClock clock_;  // the Date header's wall time: Tue, 04 Mar 2025 05:06:07 GMT (set in the constructor)
  std::unique_ptr<Connection> conn_;
};

TEST_F(Http1Test, AnswersAPostWithOneWellFormedResponse) {
  EXPECT_EQ(Feed("POST /validate?timeout=10s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 "Content-Length: 2\r\n\r\n{}"),
            "HTTP/1.1 200 OK\r\nDate: Tue, 04 Mar 2025 05:06:07 GMT\r\nContent-Type: "
            "application/json\r\nContent-Length: 26\r\n\r\n"
            "{\"path\":\"/validate\",\"n\":1}");
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(seen_[0].method, "POST");
  EXPECT_EQ(seen_[0].target, "/validate?timeout=10s");
  EXPECT_EQ(seen_[0].path, "/validate");
  EXPECT_EQ(seen_[0].body, "{}");
  EXPECT_EQ(seen_[0].remote_addr, "10.0.0.7");
  ASSERT_NE(seen_[0].Header("content-type"), nullptr);
  EXPECT_EQ(*seen_[0].Header("content-type"), "application/json");
  EXPECT_FALSE(Conn().closing());
  EXPECT_TRUE(Conn().idle());
}

TEST_F(Http1Test, ByteByByteArrivalAndBareLineFeeds) {
  const std::string req = "POST /a HTTP/1.1\nHOST:   spaced value  \nContent-Length: 3\n\nabc";
  for (size_t i = 0; i + 1 < req.size(); ++i)
    EXPECT_EQ(Feed(std::string_view(&req[i], 1)), "") << "answered before the body was complete, at byte " << i;
  EXPECT_EQ(Feed(std::string_view(&req.back(), 1)),
            "HTTP/1.1 200 OK\r\nDate: Tue, 04 Mar 2025 05:06:07 GMT\r\nContent-Type: "
            "application/json\r\nContent-Length: 19\r\n\r\n{\"path\":\"/a\",\"n\":1}");
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(seen_[0].body, "abc");
  EXPECT_EQ(*seen_[0].Header("host"), "spaced value");
}

TEST_F(Http1Test, PipelinedRequestsAreAnsweredInOrder) {
  const std::string out = Feed(
      "POST /one HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nxPOST /two HTTP/1.1\r\nHost: x\r\nContent-Length: "
      "0\r\n\r\nGET /thr");
  EXPECT_EQ(out,
            "HTTP/1.1 200 OK\r\nDate: Tue, 04 Mar 2025 05:06:07 GMT\r\nContent-Type: "
            "application/json\r\nContent-Length: 21\r\n\r\n{\"path\":\"/one\",\"n\":1}"
            "HTTP/1.1 200 OK\r\nDate: Tue, 04 Mar 2025 05:06:07 GMT\r\nContent-Type: "
            "application/json\r\nContent-Length: 21\r\n\r\n{\"path\":\"/two\",\"n\":2}");
  EXPECT_FALSE(Conn().idle());  // the third has begun
  Feed("ee HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_EQ(seen_.size(), 3u);
  EXPECT_EQ(seen_[2].path, "/three");
}

TEST_F(Http1Test, ConnectionCloseAndHttp10) {
  EXPECT_NE(
      Feed("POST /a HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Close\r\n\r\n").find("\r\nConnection: close\r\n"),
      std::string::npos);
  EXPECT_TRUE(Conn().closing());
  Feed("POST /b HTTP/1.1\r\nHost: x\r\n\r\n");  // after close: ignored
  EXPECT_EQ(seen_.size(), 1u);

  // Two Connection field lines are one list (found by the h11 differential
  // check: the second one used to be ignored).
  conn_.reset();
  EXPECT_NE(
      Feed(
          "GET /a HTTP/1.1\r\nHost: x\r\nConnection: te\r\nConnection: close\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
          .find("\r\nConnection: close\r\n"),
      std::string::npos);
  EXPECT_TRUE(Conn().closing());
  EXPECT_EQ(seen_.size(), 2u);

  conn_.reset();
  EXPECT_NE(Feed("GET /a HTTP/1.0\r\n\r\n").find("\r\nConnection: close\r\n"), std::string::npos);
  EXPECT_TRUE(Conn().closing());

  conn_.reset();
  EXPECT_NE(Feed("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").find("\r\nConnection: keep-alive\r\n"),
            std::string::npos);
  EXPECT_FALSE(Conn().closing());
}

// A handler's Response::close (a server about to stop): Connection: close
// on that answer, whatever the request asked, and nothing after it is read.
TEST_F(Http1Test, AHandlersCloseEndsAKeptAliveConnection) {
  handler_ = [this](const Request& r) {
    seen_.push_back(r);
    Response res{200, "text/plain", "ok", {}};
    res.close = true;
    return res;
  };
  EXPECT_EQ(Feed("POST /a HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"
                 "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"),
            "HTTP/1.1 200 OK\r\nDate: Tue, 04 Mar 2025 05:06:07 GMT\r\nContent-Type: text/plain\r\n"
            "Content-Length: 2\r\nConnection: close\r\n\r\nok");
  EXPECT_TRUE(Conn().closing());
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(seen_[0].path, "/a");
}

TEST_F(Http1Test, ExpectContinueIsAnsweredOnceBeforeTheBody) {
  EXPECT_EQ(Feed("POST /a HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n"),
            "HTTP/1.1 100 Continue\r\n\r\n");
  EXPECT_EQ(Feed("ab"), "");
  EXPECT_EQ(Feed("cd").rfind("HTTP/1.1 200 OK\r\nDate: Tue, 04 Mar 2025 05:06:07 GMT\r\n", 0), 0u);
}

TEST_F(Http1Test, BodyOverTheLimitIsRefusedBeforeItIsRead) {
  EXPECT_EQ(Feed("POST /validate HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 101\r\n\r\n"),
            "HTTP/1.1 413 Payload Too Large\r\nDate: Tue, 04 Mar 2025 05:06:07 GMT\r\nContent-Type: text/plain; "
            "charset=utf-8\r\nContent-Length: 67\r\n"
            "Connection: close\r\n\r\nrequest body too large: Content-Length 101, the limit is 100 bytes\n");
  EXPECT_TRUE(Conn().closing());
  EXPECT_TRUE(seen_.empty());
  ASSERT_EQ(refused_.size(), 1u);
  EXPECT_EQ(refused_[0].first.path, "/validate");
  EXPECT_EQ(refused_[0].second.status, 413);
  // What the client keeps sending is not read as a request.
  EXPECT_EQ(Feed("POST /validate HTTP/1.1\r\nHost: x\r\n\r\n"), "");
  EXPECT_TRUE(seen_.empty());
}

struct Refusal {
  std::string name;
  std::string bytes;
  int status;
  std::string message;
};

TEST_F(Http1Test, MalformedRequestsAreRefusedWithTheirStatusAndClosed) {
  const std::vector<Refusal> cases = {
      {"chunked", "POST /v HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 411,
       "Transfer-Encoding chunked is not supported: send a Content-Length"},
      {"huge length", "POST /v HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413,
       "request body too large: Content-Length 99999999999999999999999, the limit is 100 bytes"},
      {"length not a number", "POST /v HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n", 400,
       "malformed Content-Length \"1x\""},
      {"negative length", "POST /v HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400,
       "malformed Content-Length \"-1\""},
      {"conflicting lengths", "POST /v HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400,
       "conflicting Content-Length headers"},
      {"lengths that differ as text",
       "POST /v HTTP/1.1\r\nHost: x\r\nContent-Length: 03\r\nContent-Length: 3\r\n\r\nabc", 400,
       "conflicting Content-Length headers"},
      {"no version", "POST /v\r\n\r\n", 400, "malformed request line"},
      {"absolute target", "POST http://x/v HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed request line"},
      {"extra space", "POST  /v HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed request line"},
      {"binary method", "P\x01ST /v HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed request line"},
      {"TLS bytes on a plain connection", "\x16\x03\x01\x02\x05\x01\x07\x01\xfc\x03\x03\n\n", 400,
       "malformed request line"},
      {"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, "malformed request line"},
      {"HTTP/1.2", "GET /v HTTP/1.2\r\n\r\n", 505, "HTTP version not supported: HTTP/1.1 and HTTP/1.0 are"},
      {"header without colon", "GET /v HTTP/1.1\r\nHost x\r\n\r\n", 400, "malformed header line"},
      {"space before colon", "GET /v HTTP/1.1\r\nHost : x\r\n\r\n", 400, "malformed header line"},
      {"bare CR in a header value", "GET /v HTTP/1.1\r\nHost: x\r\nA: b\rc\r\n\r\n", 400,
       "invalid character in the value of header a"},
      {"NUL in a header value", "GET /v HTTP/1.1\r\nHost: x\r\nA: b\0c\r\n\r\n"s, 400,
       "invalid character in the value of header a"},
      {"control character in a header value", "GET /v HTTP/1.1\r\nHost: x\x01y\r\n\r\n", 400,
       "invalid character in the value of header host"},
      {"DEL in a header value", "GET /v HTTP/1.1\r\nHost: x\x7f\r\n\r\n", 400,
       "invalid character in the value of header host"},
      {"bare CR in the request line", "GET /a\rb HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed request line"},
      {"bare CR ending the request line", "GET /a HTTP/1.1\r\r\nHost: x\r\n\r\n", 400, "malformed request line"},
      {"non-ASCII target", "GET /\xc3\xa9 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed request line"},
      {"HTTP/1.1 without Host", "GET /v HTTP/1.1\r\nA: b\r\n\r\n", 400, "missing Host header"},
      {"HTTP/1.0 with two Host headers", "GET /v HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", 400,
       "more than one Host header"},
      {"HTTP/1.1 with two Host headers", "GET /v HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n", 400,
       "more than one Host header"},
      {"invalid UTF-8 quoted in the answer", "POST /v HTTP/1.1\r\nHost: x\r\nContent-Length: \xff\xfe\r\n\r\n", 400,
       "malformed Content-Length \"\\xff\\xfe\""},
      {"obs-fold", "GET /v HTTP/1.1\r\nHost: x\r\nA: b\r\n c\r\n\r\n", 400,
       "obsolete header line folding is not accepted"},
      {"too many headers", "GET /v HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\nF: 6\r\n\r\n", 431,
       "more than 5 header fields"},
      {"head too long", "GET /v HTTP/1.1\r\nHost: x\r\nA: " + std::string(300, 'a') + "\r\n\r\n", 431,
       "request line and headers exceed 256 bytes"},
      {"head too long without a line end", "GET /" + std::string(300, 'a'), 431,
       "request line and headers exceed 256 bytes"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    conn_.reset();
    refused_.clear();
    seen_.clear();
    const std::string out = Feed(c.bytes);
    const std::string body = c.message + "\n";
    EXPECT_EQ(
        out,
        "HTTP/1.1 " + std::to_string(c.status) + " " + ReasonPhrase(c.status) +
            "\r\nDate: Tue, 04 Mar 2025 05:06:07 GMT\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
            std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
    EXPECT_TRUE(Conn().closing());
    EXPECT_TRUE(seen_.empty());
    ASSERT_EQ(refused_.size(), 1u);
    EXPECT_EQ(refused_[0].second.status, c.status);
  }
}

TEST_F(Http1Test, StalledRequestGets408AtTheReadTimeout) {
  Feed("POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhalf", 500ms);
  EXPECT_EQ(Conn().deadline(), t0_ + 2500ms);
  Conn().OnTimer(t0_ + 2499ms);
  EXPECT_EQ(Take(), "");
  EXPECT_FALSE(Conn().closing());
  // More bytes do not extend the deadline: it bounds the whole request.
  Feed("mo", 2000ms);
  Conn().OnTimer(t0_ + 2500ms);
  EXPECT_EQ(Take(),
            "HTTP/1.1 408 Request Timeout\r\nDate: Tue, 04 Mar 2025 05:06:07 GMT\r\nContent-Type: text/plain; "
            "charset=utf-8\r\nContent-Length: 43\r\n"
            "Connection: close\r\n\r\nrequest not received in full within 2000ms\n");
  EXPECT_TRUE(Conn().closing());
  ASSERT_EQ(refused_.size(), 1u);
  EXPECT_EQ(refused_[0].first.path, "/validate");
}

TEST_F(Http1Test, IdleConnectionClosesSilentlyAtTheIdleTimeout) {
  Feed("POST /a HTTP/1.1\r\nHost: x\r\n\r\n", 1000ms);
  EXPECT_TRUE(Conn().idle());
  EXPECT_EQ(Conn().deadline(), t0_ + 31000ms);
  Conn().OnTimer(t0_ + 30999ms);
  EXPECT_FALSE(Conn().closing());
  Conn().OnTimer(t0_ + 31000ms);
  EXPECT_TRUE(Conn().closing());
  EXPECT_EQ(Take(), "");
  EXPECT_TRUE(refused_.empty());
}

TEST_F(Http1Test, HandlerExceptionIsA500NotACrash) {
  handler_ = [](const Request&) -> Response { throw std::runtime_error("boom"); };
  EXPECT_EQ(Feed("POST /a HTTP/1.1\r\nHost: x\r\n\r\n"),
            "HTTP/1.1 500 Internal Server Error\r\nDate: Tue, 04 Mar 2025 05:06:07 GMT\r\nContent-Type: text/plain; "
            "charset=utf-8\r\nContent-Length: 21\r\n"
            "\r\ninternal error: boom\n");
}

TEST_F(Http1Test, HeadAnswersWithoutABodyAndExtraHeadersAreWritten) {
  handler_ = [](const Request&) { return Response{405, "text/plain", "POST only\n", {{"Allow", "POST"}}}; };
  EXPECT_EQ(Feed("HEAD /a HTTP/1.1\r\nHost: x\r\n\r\n"),
            "HTTP/1.1 405 Method Not Allowed\r\nDate: Tue, 04 Mar 2025 05:06:07 GMT\r\nContent-Type: "
            "text/plain\r\nContent-Length: 10\r\nAllow: POST\r\n\r\n");
}

TEST_F(Http1Test, Http10NeedsNoHostAndGetsNo100Continue) {
  // RFC 9110 10.1.1: a server MUST NOT send 100 Continue to an HTTP/1.0 client.
  EXPECT_EQ(Feed("POST /a HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\nab"), "");
  EXPECT_EQ(Feed("cd"),
            "HTTP/1.1 200 OK\r\nDate: Tue, 04 Mar 2025 05:06:07 GMT\r\nContent-Type: application/json\r\n"
            "Content-Length: 19\r\nConnection: close\r\n\r\n{\"path\":\"/a\",\"n\":1}");
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(seen_[0].body, "abcd");
}

TEST_F(Http1Test, DateHeaderFollowsTheWallClock) {
  Feed("GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
  clock_.SetWall(std::chrono::system_clock::from_time_t(1741064767 + 86400 * 300 + 3600 + 61));
  EXPECT_NE(Feed("GET /a HTTP/1.1\r\nHost: x\r\n\r\n").find("\r\nDate: Mon, 29 Dec 2025 06:07:08 GMT\r\n"),
            std::string::npos);
}

// A head that arrives a byte at a time is still examined once, not once per
// byte (which made a 16 KiB head cost 16384 scans of up to 16 KiB).
TEST_F(Http1Test, HeadArrivingByteByByteIsScannedOnce) {
  limits_.max_header_bytes = 64 * 1024;
  limits_.max_headers = 1000;
  std::string head = "POST /a HTTP/1.1\r\nHost: x\r\n";
  while (head.size() < 60000) head += "X-Filler: " + std::string(50, 'f') + "\r\n";
  head += "Content-Length: 0\r\n\r\n";
  for (char c : head) Feed(std::string_view(&c, 1));
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(Conn().head_bytes_scanned(), head.size());
}

// RFC 9112 2.2 lets a server skip empty lines before a request; they are not
// requests, so they do not restart the idle timeout.
TEST_F(Http1Test, EmptyLinesDoNotKeepAnIdleConnectionOpen) {
  Feed("GET /a HTTP/1.1\r\nHost: x\r\n\r\n", 1000ms);
  for (auto at = 5000ms; at < 31000ms; at += 5000ms) {
    EXPECT_EQ(Feed("\r\n", at), "");
    Conn().OnTimer(t0_ + at);
    EXPECT_FALSE(Conn().closing()) << at.count();
  }
  EXPECT_EQ(Conn().deadline(), t0_ + 31000ms);
  Conn().OnTimer(t0_ + 31000ms);
  EXPECT_TRUE(Conn().closing());
  EXPECT_EQ(Take(), "");
}

TEST_F(Http1Test, LeadingEmptyLinesAreIgnored) {
  EXPECT_EQ(Feed("\r\n\r\nPOST /a HTTP/1.1\r\nHost: x\r\n\r\n").rfind("HTTP/1.1 200 OK", 0), 0u);
}

}  // namespace
}  // namespace ms::transport
