// The decision of mode `self`: from the Secret and the webhook
// configurations as observed, at `now`, the Secret and the trust bundle they
// should have (policy.h gives the schedule, docs/operator/certificates.md
// explains it). A function of its inputs: new certificates come from the
// Issuer passed in (OpenSSL in the program, a fake in tests), time is a
// parameter, and nothing is read or written here.
//
// In order:
//  1. The current CA must be usable (a CA, its key matching, not expired);
//     if not (first start, Secret deleted, key lost, CA expired), ca-next is
//     promoted when usable, else a new CA is made. Every unexpired CA still
//     trusted anywhere (the old Secret's CAs, the configurations' caBundle)
//     stays in `previous` for one propagation delay, so the webhook replicas
//     that still serve the old certificate are not refused meanwhile.
//  2. At 2/3 of the current CA's lifetime, a new CA is made (ca-next): it
//     joins the bundle, it does not sign.
//  3. When every existing configuration carries a bundle with both, the
//     Secret records that time (next-trusted-since).
//  4. One propagation delay later, ca-next becomes current (and signs); the
//     old CA moves to `previous` until another delay has passed.
//  5. The serving certificate is renewed when it is missing, not signed by
//     the current CA, for other names, with a foreign key, expired, or at 2/3
//     of its lifetime (unless a new one could end no later: it is capped at
//     the CA's end, and then waits for the CA switch).
//  6. `previous` is dropped once previous-until has passed (an expired CA at once).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "controller/webhookcerts/policy.h"
#include "controller/webhookcerts/state.h"

namespace ms::webhookcerts {

// Makes certificates. The decision calls it only when one is needed.
class Issuer {
 public:
  virtual ~Issuer() = default;
  // A self-signed CA valid over [not_before, not_after].
  virtual CertRecord NewCa(const std::string& common_name, WallTime not_before, WallTime not_after) = 0;
  // A serving certificate for `dns_names` signed by `ca`.
  virtual CertRecord NewServing(const CertRecord& ca, const std::string& common_name,
                                const std::vector<std::string>& dns_names, WallTime not_before, WallTime not_after) = 0;
};

struct Observed {
  std::optional<SecretState> secret;  // nullopt: there is no Secret
  std::vector<ConfigState> configs;   // the webhook configurations kept (absent ones with exists = false)
};

struct Decision {
  SecretState secret;                  // what the Secret should hold
  std::vector<Certificate> bundle;     // the trust bundle (ca.crt, caBundle)
  bool write_secret = false;           // create it (no Secret observed) or update it
  std::vector<size_t> configs_to_fix;  // indices into Observed::configs whose caBundle differs
  std::vector<std::string> changes;    // what was decided, one line each, for the log
  int cas_issued = 0;
  int servings_issued = 0;
  WallTime next_check{};  // when something falls due at the latest (> now)
};

Decision Decide(const Observed& observed, WallTime now, const Policy& policy, Issuer& issuer);

// The CA named in a new CA certificate: "modelservice-webhook-ca@<unix seconds>".
std::string CaCommonName(WallTime now);

}  // namespace ms::webhookcerts
