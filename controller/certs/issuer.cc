#include "controller/certs/issuer.h"

#include <stdexcept>

namespace ms::controller::certs {

namespace {

CertRecord Record(const std::string& cert_pem, std::string key_pem, std::string signed_by) {
  auto cert = ms::certs::ParseCertificate(cert_pem);
  if (!cert) throw std::runtime_error("a certificate just issued does not parse");
  CertRecord r;
  r.cert = std::move(*cert);
  r.key_pem = std::move(key_pem);
  r.key_ok = true;
  r.signed_by = std::move(signed_by);
  return r;
}

}  // namespace

CertRecord OpensslIssuer::NewCa(const std::string& common_name, WallTime not_before, WallTime not_after) {
  ms::certs::Template t;
  t.common_name = common_name;
  t.is_ca = true;
  t.not_before = not_before;
  t.not_after = not_after;
  std::string key = ms::certs::NewPrivateKey();
  const std::string pem = ms::certs::Issue(t, key, nullptr);
  return Record(pem, std::move(key), "");
}

CertRecord OpensslIssuer::NewServing(const CertRecord& ca, const std::string& common_name,
                                     const std::vector<std::string>& dns_names, WallTime not_before,
                                     WallTime not_after) {
  ms::certs::Template t;
  t.common_name = common_name;
  t.dns_names = dns_names;
  t.not_before = not_before;
  t.not_after = not_after;
  std::string key = ms::certs::NewPrivateKey();
  const ms::certs::KeyPairPem issuer{ca.cert.pem, ca.key_pem};
  const std::string pem = ms::certs::Issue(t, key, &issuer);
  return Record(pem, std::move(key), ca.cert.fingerprint);
}

}  // namespace ms::controller::certs
