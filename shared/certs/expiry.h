// Log warnings before a certificate expires: 30 and 7 days before, and once
// it has expired, each once per certificate (by fingerprint). Both programs
// check the certificates they know (the webhook the one it serves, the
// controller those of the Secret it keeps) every time they look at them; a
// warning means that renewal is not happening (see
// docs/operator/certificates.md). Not thread-safe: one per checking thread.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "shared/certs/x509.h"

namespace ms::certs {

struct ExpiryWarning {
  bool expired = false;  // log at error level; else warn
  std::string message;
};

class ExpiryWarnings {
 public:
  // Check `what` ("serving certificate", "webhook CA") at `now`: the warning
  // to log when the certificate has crossed a threshold it was not warned
  // about yet. Past several thresholds at once (first seen 5 days before its
  // end), only the closest is reported.
  std::optional<ExpiryWarning> Check(std::string_view what, const Certificate& cert, WallTime now);

  static constexpr std::chrono::hours kThresholds[] = {std::chrono::hours(24 * 30), std::chrono::hours(24 * 7)};

 private:
  // Per fingerprint: how many levels were reported (thresholds, then expired).
  std::map<std::string, int> reported_;
  std::deque<std::string> order_;  // oldest first, to bound reported_
};

}  // namespace ms::certs
