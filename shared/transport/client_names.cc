#include "shared/transport/client_names.h"

#include <openssl/x509v3.h>

#include <algorithm>
#include <memory>

namespace ms::transport {

namespace {

struct GeneralNamesDeleter {
  void operator()(GENERAL_NAMES* n) const { GENERAL_NAMES_free(n); }
};

std::string AsString(const ASN1_STRING* s) {
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                     static_cast<size_t>(ASN1_STRING_length(s)));
}

// SSL_CTX_set_cert_verify_callback: OpenSSL's own chain verification, then
// the names of the leaf.
int VerifyWithNames(X509_STORE_CTX* store_ctx, void* arg) {
  if (X509_verify_cert(store_ctx) != 1) return 0;
  const auto& allowed = *static_cast<const std::vector<std::string>*>(arg);
  if (ClientNameAllowed(X509_STORE_CTX_get0_cert(store_ctx), allowed)) return 1;
  X509_STORE_CTX_set_error(store_ctx, X509_V_ERR_APPLICATION_VERIFICATION);
  return 0;
}

}  // namespace

std::vector<std::string> CertificateNames(X509* cert) {
  std::vector<std::string> names;
  if (!cert) return names;
  X509_NAME* subject = X509_get_subject_name(cert);
  for (int i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(subject, NID_commonName, i))
    names.push_back(AsString(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i))));
  std::unique_ptr<GENERAL_NAMES, GeneralNamesDeleter> sans(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; sans && i < sk_GENERAL_NAME_num(sans.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(sans.get(), i);
    if (name->type == GEN_DNS) names.push_back(AsString(name->d.dNSName));
  }
  return names;
}

bool ClientNameAllowed(X509* cert, const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), "*") != allowed.end()) return true;
  const auto names = CertificateNames(cert);
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
    // A name with a NUL byte inside never matches (X.509 strings may hold one).
    return n.find('\0') == std::string::npos && std::find(allowed.begin(), allowed.end(), n) != allowed.end();
  });
}

void RequireClientNames(SSL_CTX& ctx, const std::vector<std::string>& allowed) {
  if (allowed.empty()) return;
  SSL_CTX_set_cert_verify_callback(&ctx, VerifyWithNames, const_cast<std::vector<std::string>*>(&allowed));
}

}  // namespace ms::transport
