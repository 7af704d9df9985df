// A fake Issuer for the pure tests of the decision: certificates are
// records with a name ("ca-1", "srv-2") for a fingerprint, exact times and
// no cryptography, so schedules can be run over years of virtual time.
#pragma once

#include <string>
#include <vector>

#include "controller/webhookcerts/decide.h"

namespace ms::webhookcerts::testing {

inline CertRecord FakeRecord(const std::string& id, WallTime not_before, WallTime not_after, bool is_ca,
                             std::vector<std::string> dns_names = {}, std::string signed_by = {}) {
  CertRecord r;
  r.cert.fingerprint = id;
  r.cert.pem = "<" + id + ">\n";
  r.cert.subject = "CN=" + id;
  r.cert.not_before = not_before;
  r.cert.not_after = not_after;
  r.cert.is_ca = is_ca;
  r.cert.dns_names = std::move(dns_names);
  r.key_pem = "key of " + id;
  r.key_ok = true;
  r.signed_by = std::move(signed_by);
  return r;
}

class FakeIssuer final : public Issuer {
 public:
  CertRecord NewCa(const std::string&, WallTime not_before, WallTime not_after) override {
    ++cas;
    return FakeRecord("ca-" + std::to_string(cas), not_before, not_after, true);
  }
  CertRecord NewServing(const CertRecord& ca, const std::string&, const std::vector<std::string>& dns_names,
                        WallTime not_before, WallTime not_after) override {
    ++servings;
    return FakeRecord("srv-" + std::to_string(servings), not_before, not_after, false, dns_names, ca.cert.fingerprint);
  }
  int cas = 0;
  int servings = 0;
};

// Two configurations ("validating", "mutating") with one webhook each,
// trusting `fps` (empty: caBundle blank).
inline std::vector<ConfigState> Configs(const std::vector<std::string>& fps = {},
                                        const std::vector<Certificate>& cas = {}) {
  std::vector<ConfigState> out;
  for (const char* name : {"validating", "mutating"}) {
    ConfigState c;
    c.name = name;
    c.exists = true;
    c.webhook_bundles = {fps};
    c.cas = cas;
    out.push_back(c);
  }
  return out;
}

}  // namespace ms::webhookcerts::testing
