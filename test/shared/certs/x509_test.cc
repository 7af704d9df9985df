// Issuing and reading certificates, checked against the openssl command (an
// independent implementation): ECDSA P-256, SHA-256, the CA and serving
// extensions, the names, a chain that verifies.
#include "shared/certs/x509.h"

#include <gtest/gtest.h>

#include "test/support/test_support.h"

namespace ms::certs {
namespace {

using namespace std::chrono_literals;

struct Issued {
  KeyPairPem ca, serving;
};

Issued IssueChain(WallTime now) {
  Issued out;
  out.ca.key_pem = NewPrivateKey();
  out.ca.cert_pem = Issue({"test-ca", {}, true, now - 1h, now + 24h}, out.ca.key_pem, nullptr);
  out.serving.key_pem = NewPrivateKey();
  out.serving.cert_pem =
      Issue({"wh.ns.svc", {"wh", "wh.ns", "wh.ns.svc", "wh.ns.svc.cluster.local"}, false, now - 1h, now + 2h},
            out.serving.key_pem, &out.ca);
  return out;
}

TEST(X509, AChainTheOpensslCommandVerifies) {
  test::TempDir dir;
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  const Issued chain = IssueChain(now);
  test::WriteFile(dir.File("ca.crt"), chain.ca.cert_pem);
  test::WriteFile(dir.File("tls.crt"), chain.serving.cert_pem);
  test::WriteFile(dir.File("tls.key"), chain.serving.key_pem);
  const auto verify =
      test::Run("openssl verify -purpose sslserver -CAfile " + dir.File("ca.crt") + " " + dir.File("tls.crt"));
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  const auto text = test::Run("openssl x509 -noout -text -in " + dir.File("tls.crt"));
  EXPECT_NE(text.output.find("ASN1 OID: prime256v1"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("ecdsa-with-SHA256"), std::string::npos);
  EXPECT_NE(text.output.find("DNS:wh, DNS:wh.ns, DNS:wh.ns.svc, DNS:wh.ns.svc.cluster.local"), std::string::npos);
  EXPECT_NE(text.output.find("TLS Web Server Authentication"), std::string::npos);
  EXPECT_NE(text.output.find("CA:FALSE"), std::string::npos);
  const auto ca_text = test::Run("openssl x509 -noout -text -in " + dir.File("ca.crt"));
  EXPECT_NE(ca_text.output.find("CA:TRUE, pathlen:0"), std::string::npos) << ca_text.output;
  EXPECT_NE(ca_text.output.find("Certificate Sign, CRL Sign"), std::string::npos);
  const auto key = test::Run("openssl pkey -noout -text -in " + dir.File("tls.key"));
  EXPECT_NE(key.output.find("prime256v1"), std::string::npos) << key.output;
}

TEST(X509, WhatIsReadBack) {
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  const Issued chain = IssueChain(now);
  const auto ca = ParseCertificate(chain.ca.cert_pem);
  const auto srv = ParseCertificate(chain.serving.cert_pem);
  ASSERT_TRUE(ca && srv);
  EXPECT_TRUE(ca->is_ca);
  EXPECT_FALSE(srv->is_ca);
  EXPECT_EQ(srv->subject, "CN=wh.ns.svc");
  EXPECT_EQ(srv->not_before, now - 1h);
  EXPECT_EQ(srv->not_after, now + 2h);
  EXPECT_EQ(srv->dns_names, (std::vector<std::string>{"wh", "wh.ns", "wh.ns.svc", "wh.ns.svc.cluster.local"}));
  EXPECT_EQ(srv->fingerprint.size(), 64u);
  EXPECT_EQ(srv->pem, chain.serving.cert_pem);
  EXPECT_NE(srv->fingerprint, ca->fingerprint);
  // Two issued the same way still differ (random serial, new key).
  EXPECT_NE(ParseCertificate(IssueChain(now).serving.cert_pem)->fingerprint, srv->fingerprint);

  EXPECT_TRUE(IsSignedBy(chain.serving.cert_pem, chain.ca.cert_pem));
  EXPECT_TRUE(IsSignedBy(chain.ca.cert_pem, chain.ca.cert_pem));
  const Issued other = IssueChain(now);
  EXPECT_FALSE(IsSignedBy(chain.serving.cert_pem, other.ca.cert_pem));
  EXPECT_TRUE(KeyMatches(chain.serving.cert_pem, chain.serving.key_pem));
  EXPECT_FALSE(KeyMatches(chain.serving.cert_pem, other.serving.key_pem));
  EXPECT_FALSE(KeyMatches(chain.serving.cert_pem, "not a key"));
  EXPECT_EQ(CheckPair(chain.serving.cert_pem + chain.ca.cert_pem, chain.serving.key_pem).fingerprint, srv->fingerprint);
}

TEST(X509, BundlesAndGarbage) {
  const auto now = std::chrono::system_clock::now();
  const Issued a = IssueChain(now), b = IssueChain(now);
  const auto bundle = ParseCertificates("junk before\n" + a.ca.cert_pem + a.ca.key_pem + b.ca.cert_pem);
  ASSERT_EQ(bundle.size(), 2u);
  EXPECT_EQ(bundle[0].pem, a.ca.cert_pem);
  EXPECT_EQ(bundle[1].pem, b.ca.cert_pem);
  EXPECT_TRUE(ParseCertificates("").empty());
  EXPECT_THROW(ParseCertificates("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), std::runtime_error);
  EXPECT_FALSE(ParseCertificate("garbage"));
  EXPECT_THROW(CheckPair("garbage", a.serving.key_pem), std::runtime_error);
  EXPECT_THROW(CheckPair(a.serving.cert_pem, "garbage"), std::runtime_error);
  try {
    CheckPair(a.serving.cert_pem, b.serving.key_pem);
    FAIL() << "a mismatched pair was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "the private key does not match the certificate");
  }
  // An issuer whose key is not its certificate's.
  const KeyPairPem wrong{a.ca.cert_pem, b.ca.key_pem};
  EXPECT_THROW(Issue({"x", {}, false, now, now + 1h}, NewPrivateKey(), &wrong), std::runtime_error);
}

}  // namespace
}  // namespace ms::certs
