// libFuzzer: the HTTP/1.1 connection state machine (shared/transport/http1.h)
// fed random bytes in random splits at random times. Besides the sanitizers'
// findings, it checks what a client would see: the output is a sequence of
// complete, well-formed answers, one per request the handler saw or the
// connection refused; a refusal is the last answer; nothing is answered or
// handled once the connection is closing; each body is its Content-Length;
// every request the handler sees has well-formed header values and, in
// HTTP/1.1, one Host header. Every header value also goes through the
// Accept-Encoding reader of /metrics (gzip.h), which must agree with itself
// whatever the case of the value.
#include <fuzzer/FuzzedDataProvider.h>

#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

#include "shared/transport/gzip.h"
#include "shared/transport/http1.h"
#include "test/support/fake_clock.h"

namespace {

using ms::transport::Connection;
using ms::transport::Request;
using ms::transport::Response;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

// Consumes one answer from `out`; false when none is complete.
bool TakeAnswer(std::string& out, bool head_request) {
  if (out.rfind("HTTP/1.1 100 Continue\r\n\r\n", 0) == 0) {
    out.erase(0, 25);
    return TakeAnswer(out, head_request);
  }
  Check(out.rfind("HTTP/1.1 ", 0) == 0, "an answer starts with its status line");
  const size_t end = out.find("\r\n\r\n");
  Check(end != std::string::npos, "an answer's head is complete");
  const std::string head = out.substr(0, end + 2);
  Check(head.find("\r\nDate: ") != std::string::npos, "an answer has a Date");
  const size_t cl = head.find("\r\nContent-Length: ");
  Check(cl != std::string::npos, "an answer has a Content-Length");
  const size_t length = std::strtoul(head.c_str() + cl + 18, nullptr, 10);
  const size_t total = end + 4 + (head_request ? 0 : length);
  Check(out.size() >= total, "an answer's body is complete");
  out.erase(0, total);
  return true;
}

bool ValidValue(const std::string& v) {
  for (char ch : v) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
  }
  return v.empty() || (v.front() != ' ' && v.back() != ' ' && v.front() != '\t' && v.back() != '\t');
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  ms::transport::Limits limits;
  limits.max_header_bytes = in.ConsumeIntegralInRange<size_t>(16, 2048);
  limits.max_headers = in.ConsumeIntegralInRange<size_t>(1, 20);
  limits.max_body_bytes = in.ConsumeIntegralInRange<size_t>(0, 4096);
  limits.read_timeout = std::chrono::milliseconds(in.ConsumeIntegralInRange<int>(1, 10000));
  limits.idle_timeout = std::chrono::milliseconds(in.ConsumeIntegralInRange<int>(1, 30000));

  std::vector<bool> head_requests;  // per answer, in order: no body follows its head
  size_t handled = 0, refused = 0;
  bool refused_last = false;
  Connection::Handler handler = [&](const Request& r) {
    ++handled;
    Check(!refused_last, "no request is handled after a refusal");
    Check(r.minor_version == 0 || r.minor_version == 1, "HTTP/1.0 or 1.1");
    Check(!r.target.empty() && r.target.front() == '/', "origin-form target");
    size_t hosts = 0;
    std::string length = "0";
    for (const auto& [name, value] : r.headers) {
      Check(ValidValue(value), "header values are trimmed and free of control characters");
      if (name == "host") ++hosts;
      if (name == "content-length") length = value;
      Check(name != "transfer-encoding", "no Transfer-Encoding request reaches the handler");
      std::string upper = value;
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      Check(ms::transport::AcceptsGzip(&value) == ms::transport::AcceptsGzip(&upper),
            "Accept-Encoding is read without regard to case");
    }
    Check(r.minor_version == 0 || hosts == 1, "HTTP/1.1 requests have one Host");
    Check(std::strtoull(length.c_str(), nullptr, 10) == r.body.size(), "the body is Content-Length bytes");
    head_requests.push_back(r.method == "HEAD");
    std::string body(r.body.size() % 7, 'x');
    return Response{200 + static_cast<int>(r.body.size() % 3), "text/plain", body, {}};
  };
  Connection::RefusalHook hook = [&](const Request& r, const Response& res) {
    ++refused;
    Check(res.status >= 400 && res.status < 600, "a refusal is a 4xx or 5xx");
    head_requests.push_back(r.method == "HEAD");
    refused_last = true;
  };
  ms::FakeClock clock;
  auto now = std::chrono::steady_clock::time_point(std::chrono::seconds(100));
  Connection conn(limits, handler, hook, "192.0.2.1", now, clock);

  std::string seen;  // everything answered so far
  size_t answers = 0;
  bool was_closing = false;
  while (in.remaining_bytes() > 0) {
    now += std::chrono::milliseconds(in.ConsumeIntegralInRange<int>(0, 3000));
    const size_t before = handled + refused;
    if (in.ConsumeBool()) {
      conn.OnTimer(now);
    } else {
      const std::string chunk = in.ConsumeRandomLengthString(512);
      conn.OnData(chunk, now);
    }
    if (was_closing) {
      Check(conn.output().empty(), "nothing is written once closing");
      Check(handled + refused == before, "nothing is handled once closing");
    }
    seen += conn.output();
    conn.output().clear();
    while (answers < head_requests.size()) {
      Check(TakeAnswer(seen, head_requests[answers]), "each answer is complete");
      ++answers;
    }
    Check(seen.empty() || seen == "HTTP/1.1 100 Continue\r\n\r\n", "no output beyond the answers");
    if (seen == "HTTP/1.1 100 Continue\r\n\r\n") seen.clear();
    was_closing = conn.closing();
  }
  Check(refused <= 1, "at most one refusal");
  return 0;
}
