// Who may call the webhook over mTLS: a verified client certificate is
// accepted only when its subject CN or one of its DNS SANs is one of the
// allowed names (as Gatekeeper's --client-cn-name), so a certificate that
// another workload got from the same CA (CN "system:anonymous-pod", say)
// is refused during the handshake.
#pragma once

#include <openssl/ssl.h>

#include <string>
#include <vector>

namespace ms::transport {

// The certificate's subject CN and DNS SANs.
std::vector<std::string> CertificateNames(X509* cert);

// Whether one of the certificate's names is in `allowed` ("*" in `allowed`
// accepts any name).
bool ClientNameAllowed(X509* cert, const std::vector<std::string>& allowed);

// Installs the check on a context that verifies client certificates: the
// chain is verified as OpenSSL does, then the leaf's names are matched.
// `allowed` must outlive the context; an empty list installs nothing.
void RequireClientNames(SSL_CTX& ctx, const std::vector<std::string>& allowed);

}  // namespace ms::transport
