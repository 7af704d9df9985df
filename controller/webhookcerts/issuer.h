// The Issuer of the program: ECDSA P-256 keys and certificates from OpenSSL
// (certs/x509.h).
#pragma once

#include "controller/webhookcerts/decide.h"

namespace ms::webhookcerts {

class OpensslIssuer final : public Issuer {
 public:
  CertRecord NewCa(const std::string& common_name, WallTime not_before, WallTime not_after) override;
  CertRecord NewServing(const CertRecord& ca, const std::string& common_name, const std::vector<std::string>& dns_names,
                        WallTime not_before, WallTime not_after) override;
};

}  // namespace ms::webhookcerts
