// The framing decisions of shared/transport/http1.h, for the differential
// check against python3-h11 (h11_diff.py). Reads cases from stdin, each a
// 4-byte little-endian length and that many bytes of a client's stream; for
// each writes one JSON line: the requests the connection handed to its
// handler (method, target, body in hex), the status of its refusal (0 when
// none) and whether it stopped in the middle of a request.
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shared/transport/http1.h"

namespace {

std::string Hex(const std::string& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

}  // namespace

int main() {
  ms::clock::SystemClock clock;
  ms::transport::Limits limits;  // the webhook's: 16 KiB of head, 100 headers
  limits.max_body_bytes = 1 << 20;
  std::string buf(4, '\0');
  while (std::cin.read(buf.data(), 4)) {
    const auto* b = reinterpret_cast<const unsigned char*>(buf.data());
    const std::uint32_t length = b[0] | (b[1] << 8) | (b[2] << 16) | (std::uint32_t{b[3]} << 24);
    std::string data(length, '\0');
    if (!std::cin.read(data.data(), length)) return 1;

    nlohmann::json requests = nlohmann::json::array();
    int refused = 0;
    ms::transport::Connection::Handler handler = [&](const ms::transport::Request& r) {
      requests.push_back({{"method", r.method}, {"target", r.target}, {"body", Hex(r.body)}});
      return ms::transport::Response{200, "text/plain", "ok", {}};
    };
    ms::transport::Connection::RefusalHook hook = [&](const ms::transport::Request&,
                                                      const ms::transport::Response& res) { refused = res.status; };
    const auto now = std::chrono::steady_clock::now();
    ms::transport::Connection conn(limits, handler, hook, "127.0.0.1", now, clock);
    conn.OnData(data, now);
    nlohmann::json out = {{"requests", requests}, {"refused", refused}, {"pending", !conn.closing() && !conn.idle()}};
    std::cout << out.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace) << "\n" << std::flush;
  }
  return 0;
}
