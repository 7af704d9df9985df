#include "controller/webhookcerts/issuer.h"

#include <optional>
#include <stdexcept>

namespace ms::webhookcerts {

namespace {

// A new key and a certificate for it, signed by `ca` (self-signed without).
CertRecord IssueRecord(const ms::certs::Template& t, const CertRecord* ca) {
  std::string key = ms::certs::NewPrivateKey();
  std::optional<ms::certs::KeyPairPem> issuer;
  if (ca != nullptr) issuer = ms::certs::KeyPairPem{ca->cert.pem, ca->key_pem};
  auto cert = ms::certs::ParseCertificate(ms::certs::Issue(t, key, issuer ? &*issuer : nullptr));
  if (!cert) throw std::runtime_error("a certificate just issued does not parse");
  CertRecord r;
  r.cert = std::move(*cert);
  r.key_pem = std::move(key);
  r.key_ok = true;
  if (ca != nullptr) r.signed_by = ca->cert.fingerprint;
  return r;
}

}  // namespace

CertRecord OpensslIssuer::NewCa(const std::string& common_name, WallTime not_before, WallTime not_after) {
  return IssueRecord({common_name, {}, true, not_before, not_after}, nullptr);
}

CertRecord OpensslIssuer::NewServing(const CertRecord& ca, const std::string& common_name,
                                     const std::vector<std::string>& dns_names, WallTime not_before,
                                     WallTime not_after) {
  return IssueRecord({common_name, dns_names, false, not_before, not_after}, &ca);
}

}  // namespace ms::webhookcerts
