// libFuzzer: the reduction of a Prometheus /api/v1/query answer to one number
// (controller/autoscale/prometheus_client.h, ParseQueryResponse) on random
// bodies and HTTP codes: the body comes from the network (a Prometheus the
// cluster's tenants may influence). It must never throw, crash or leak, and
// its result is a finite value or an error with a message, never both.
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "controller/autoscale/prometheus_client.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  // The first byte picks the HTTP status: mostly 200, else one of the codes
  // Prometheus answers with, or any other.
  static constexpr long kCodes[] = {200, 200, 200, 200, 400, 422, 503, 500, 404, 204, 301, 0};
  const long code = kCodes[data[0] % (sizeof kCodes / sizeof kCodes[0])];
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const ms::autoscale::QueryResult r = ms::autoscale::ParseQueryResponse(code, body);
  if (r.ok && (!std::isfinite(r.value) || !r.error.empty())) std::abort();
  if (!r.ok && r.error.empty()) std::abort();
  return 0;
}
