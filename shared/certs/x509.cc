#include "shared/certs/x509.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>

namespace ms::certs {

namespace {

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
using Bio = std::unique_ptr<BIO, Deleter<BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using BignumPtr = std::unique_ptr<BIGNUM, Deleter<BN_free>>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION_free>>;
using NamesPtr = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES_free>>;

// PEM reads never prompt for a passphrase (an encrypted key is an error).
int NoPassphrase(char*, int, int, void*) { return 0; }

std::string TakeSslError(const std::string& what) {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return what;
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return what + ": " + buf;
}

Bio ReadBio(std::string_view s) { return Bio(BIO_new_mem_buf(s.data(), static_cast<int>(s.size()))); }

std::string BioText(BIO* b) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(b, &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

X509Ptr ReadCert(std::string_view pem) {
  Bio bio = ReadBio(pem);
  X509Ptr x(bio ? PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr) : nullptr);
  ERR_clear_error();
  return x;
}

PkeyPtr ReadKey(std::string_view pem) {
  Bio bio = ReadBio(pem);
  PkeyPtr k(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr) : nullptr);
  ERR_clear_error();
  return k;
}

WallTime FromAsn1(const ASN1_TIME* t) {
  std::tm tm{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return WallTime{};
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string Hex(const unsigned char* p, unsigned int n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (unsigned int i = 0; i < n; ++i) {
    out += kDigits[p[i] >> 4];
    out += kDigits[p[i] & 0xf];
  }
  return out;
}

std::vector<std::string> DnsNames(X509* x) {
  std::vector<std::string> out;
  NamesPtr names(static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(x, NID_subject_alt_name, nullptr, nullptr)));
  if (!names) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names.get(), i);
    if (n->type != GEN_DNS) continue;
    const ASN1_IA5STRING* s = n->d.dNSName;
    out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                     static_cast<size_t>(ASN1_STRING_length(s)));
  }
  return out;
}

Certificate Describe(X509* x) {
  Certificate c;
  Bio out(BIO_new(BIO_s_mem()));
  if (!out || PEM_write_bio_X509(out.get(), x) != 1)
    throw std::runtime_error(TakeSslError("cannot write a certificate"));
  c.pem = BioText(out.get());
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  if (X509_digest(x, EVP_sha256(), md, &md_len) != 1)
    throw std::runtime_error(TakeSslError("cannot hash a certificate"));
  c.fingerprint = Hex(md, md_len);
  Bio name(BIO_new(BIO_s_mem()));
  if (name && X509_NAME_print_ex(name.get(), X509_get_subject_name(x), 0, XN_FLAG_RFC2253) >= 0)
    c.subject = BioText(name.get());
  c.not_before = FromAsn1(X509_get0_notBefore(x));
  c.not_after = FromAsn1(X509_get0_notAfter(x));
  c.is_ca = (X509_get_extension_flags(x) & EXFLAG_CA) != 0;
  c.dns_names = DnsNames(x);
  ERR_clear_error();
  return c;
}

void AddExtension(X509* x, X509V3_CTX* ctx, int nid, const char* value) {
  ExtPtr ext(X509V3_EXT_conf_nid(nullptr, ctx, nid, value));
  if (!ext || X509_add_ext(x, ext.get(), -1) != 1) throw std::runtime_error(TakeSslError("cannot add an extension"));
}

// subjectAltName built entry by entry, so no name is read as config syntax.
void AddDnsNames(X509* x, const std::vector<std::string>& dns_names) {
  if (dns_names.empty()) return;
  NamesPtr names(sk_GENERAL_NAME_new_null());
  for (const auto& dns : dns_names) {
    GENERAL_NAME* n = GENERAL_NAME_new();
    ASN1_IA5STRING* s = ASN1_IA5STRING_new();
    if (n == nullptr || s == nullptr || ASN1_STRING_set(s, dns.data(), static_cast<int>(dns.size())) != 1) {
      GENERAL_NAME_free(n);
      ASN1_IA5STRING_free(s);
      throw std::runtime_error("cannot build the subjectAltName");
    }
    GENERAL_NAME_set0_value(n, GEN_DNS, s);
    sk_GENERAL_NAME_push(names.get(), n);
  }
  if (X509_add1_ext_i2d(x, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) != 1)
    throw std::runtime_error(TakeSslError("cannot add the subjectAltName"));
}

void SetSerialAndValidity(X509* x, const Template& tmpl) {
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) throw std::runtime_error(TakeSslError("no random bytes"));
  serial[0] &= 0x7f;  // positive
  BignumPtr bn(BN_bin2bn(serial, sizeof serial, nullptr));
  if (!bn || BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(x)) == nullptr)
    throw std::runtime_error(TakeSslError("cannot set the serial"));
  if (ASN1_TIME_set(X509_getm_notBefore(x), std::chrono::system_clock::to_time_t(tmpl.not_before)) == nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(x), std::chrono::system_clock::to_time_t(tmpl.not_after)) == nullptr)
    throw std::runtime_error(TakeSslError("cannot set the validity"));
}

}  // namespace

std::vector<Certificate> ParseCertificates(std::string_view pem) {
  std::vector<Certificate> out;
  Bio bio = ReadBio(pem);
  if (!bio) throw std::runtime_error("out of memory");
  while (true) {
    char* name = nullptr;
    char* header = nullptr;
    unsigned char* data = nullptr;
    long len = 0;
    if (PEM_read_bio(bio.get(), &name, &header, &data, &len) != 1) break;  // end (or trailing garbage)
    const std::string block = name;
    const unsigned char* p = data;
    X509Ptr x(block == "CERTIFICATE" ? d2i_X509(nullptr, &p, len) : nullptr);
    OPENSSL_free(name);
    OPENSSL_free(header);
    OPENSSL_free(data);
    if (block != "CERTIFICATE") continue;
    if (!x) throw std::runtime_error(TakeSslError("malformed certificate"));
    out.push_back(Describe(x.get()));
  }
  ERR_clear_error();
  return out;
}

std::optional<Certificate> ParseCertificate(std::string_view pem) {
  X509Ptr x = ReadCert(pem);
  if (!x) return std::nullopt;
  try {
    return Describe(x.get());
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
}

std::string NewPrivateKey() {
  PkeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) throw std::runtime_error(TakeSslError("cannot generate an ECDSA P-256 key"));
  Bio out(BIO_new(BIO_s_mem()));
  if (!out || PEM_write_bio_PrivateKey(out.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
    throw std::runtime_error(TakeSslError("cannot write the key"));
  return BioText(out.get());
}

bool KeyMatches(std::string_view cert_pem, std::string_view key_pem) {
  X509Ptr cert = ReadCert(cert_pem);
  PkeyPtr key = ReadKey(key_pem);
  const bool ok = cert && key && X509_check_private_key(cert.get(), key.get()) == 1;
  ERR_clear_error();
  return ok;
}

bool IsSignedBy(std::string_view cert_pem, std::string_view issuer_pem) {
  X509Ptr cert = ReadCert(cert_pem);
  X509Ptr issuer = ReadCert(issuer_pem);
  const bool ok = cert && issuer && X509_check_issued(issuer.get(), cert.get()) == X509_V_OK &&
                  X509_verify(cert.get(), X509_get0_pubkey(issuer.get())) == 1;
  ERR_clear_error();
  return ok;
}

std::string Issue(const Template& tmpl, std::string_view subject_key_pem, const KeyPairPem* issuer) {
  PkeyPtr subject_key = ReadKey(subject_key_pem);
  if (!subject_key) throw std::runtime_error("cannot read the subject's private key");
  X509Ptr issuer_cert;
  PkeyPtr issuer_key;
  if (issuer != nullptr) {
    issuer_cert = ReadCert(issuer->cert_pem);
    issuer_key = ReadKey(issuer->key_pem);
    if (!issuer_cert || !issuer_key) throw std::runtime_error("cannot read the issuer's certificate or key");
    if (X509_check_private_key(issuer_cert.get(), issuer_key.get()) != 1)
      throw std::runtime_error(TakeSslError("the issuer's key does not match its certificate"));
  }
  X509Ptr x(X509_new());
  if (!x || X509_set_version(x.get(), X509_VERSION_3) != 1) throw std::runtime_error(TakeSslError("X509_new"));
  SetSerialAndValidity(x.get(), tmpl);
  X509_NAME* name = X509_get_subject_name(x.get());
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(tmpl.common_name.c_str()), -1, -1, 0) != 1 ||
      X509_set_issuer_name(x.get(), issuer_cert ? X509_get_subject_name(issuer_cert.get()) : name) != 1 ||
      X509_set_pubkey(x.get(), subject_key.get()) != 1)
    throw std::runtime_error(TakeSslError("cannot set the names or the public key"));

  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer_cert ? issuer_cert.get() : x.get(), x.get(), nullptr, nullptr, 0);
  AddExtension(x.get(), &ctx, NID_basic_constraints, tmpl.is_ca ? "critical,CA:TRUE,pathlen:0" : "critical,CA:FALSE");
  AddExtension(x.get(), &ctx, NID_key_usage, tmpl.is_ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature");
  if (!tmpl.is_ca) AddExtension(x.get(), &ctx, NID_ext_key_usage, "serverAuth");
  AddExtension(x.get(), &ctx, NID_subject_key_identifier, "hash");
  if (issuer_cert) AddExtension(x.get(), &ctx, NID_authority_key_identifier, "keyid:always");
  AddDnsNames(x.get(), tmpl.dns_names);

  if (X509_sign(x.get(), issuer_key ? issuer_key.get() : subject_key.get(), EVP_sha256()) <= 0)
    throw std::runtime_error(TakeSslError("cannot sign the certificate"));
  Bio out(BIO_new(BIO_s_mem()));
  if (!out || PEM_write_bio_X509(out.get(), x.get()) != 1)
    throw std::runtime_error(TakeSslError("cannot write the certificate"));
  return BioText(out.get());
}

Certificate CheckPair(std::string_view cert_pem, std::string_view key_pem) {
  std::optional<Certificate> cert = ParseCertificate(cert_pem);
  if (!cert) throw std::runtime_error("no certificate in the certificate file");
  if (!ReadKey(key_pem)) throw std::runtime_error("no private key in the key file");
  if (!KeyMatches(cert_pem, key_pem)) throw std::runtime_error("the private key does not match the certificate");
  return *cert;
}

}  // namespace ms::certs
