// An HTTP answer: what a handler returns (admission's ServeReview, the
// server's routes) and what the transport sends; the transport adds the
// status line, Content-Length, Date and Connection.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ms::transport {

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers, e.g. Allow
  // Send Connection: close and close the connection after this answer (a
  // server about to stop, so that no client keeps an idle connection to it).
  bool close = false;
};

}  // namespace ms::transport
