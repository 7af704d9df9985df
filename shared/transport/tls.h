// TLS for the servers: a certificate/key pair, and the CA bundle that client
// certificates are verified against, reloaded from disk when the files
// change (as cert-manager or a kubelet Secret volume rotates them), and
// the OpenSSL server context set-up (minimum version, modern ciphers,
// optional client-certificate verification).
//
// Reload works per handshake through SSL_CTX_set_cert_cb: each new TLS
// connection gets the pair and client CAs that are current at that moment;
// connections in flight keep theirs. A half-written or mismatched pair, or a
// CA file with no certificate, is refused and the old one stays in service.
#pragma once

#include <openssl/ssl.h>
#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "shared/clock/clock.h"

namespace ms::transport {

struct X509Deleter {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct ChainDeleter {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};

struct StoreDeleter {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
struct NameStackDeleter {
  void operator()(STACK_OF(X509_NAME) * s) const { sk_X509_NAME_pop_free(s, X509_NAME_free); }
};

// Client CAs: the store verification uses and the names the server sends in
// its CertificateRequest.
struct ClientCa {
  std::unique_ptr<X509_STORE, StoreDeleter> store;
  std::unique_ptr<STACK_OF(X509_NAME), NameStackDeleter> names;
  int count = 0;
};

// Parses a PEM bundle of CA certificates; throws std::runtime_error when it
// holds none.
std::shared_ptr<const ClientCa> LoadClientCa(const std::string& pem);

struct CertPair {
  std::unique_ptr<X509, X509Deleter> cert;
  std::unique_ptr<EVP_PKEY, PkeyDeleter> key;
  std::unique_ptr<STACK_OF(X509), ChainDeleter> chain;  // intermediates after the leaf
  std::chrono::system_clock::time_point not_after;
  std::string subject;
};

// Parses PEM text; throws std::runtime_error with the reason on failure
// (no certificate, no key, key does not match the certificate).
std::shared_ptr<const CertPair> LoadCertPair(const std::string& cert_pem, const std::string& key_pem);

class CertificateReloader {
 public:
  // Loads the pair (and the client CA bundle, when `client_ca_file` is
  // set) now; throws std::runtime_error when it cannot.
  CertificateReloader(std::string cert_file, std::string key_file, std::shared_ptr<spdlog::logger> logger,
                      std::string client_ca_file = "");
  // A pair held in memory only (say a self-signed one made at start):
  // ReloadIfChanged() never replaces it. Throws std::runtime_error when the
  // pair does not load.
  struct InMemory {
    std::string cert_pem, key_pem;
  };
  CertificateReloader(const InMemory& pair, std::shared_ptr<spdlog::logger> logger);

  // Re-reads the files; installs the pair when its content changed and it
  // is a valid pair, the client CAs when their file changed and holds at
  // least one certificate. Returns true when anything new was installed.
  bool ReloadIfChanged();
  std::shared_ptr<const CertPair> Current() const;
  std::shared_ptr<const ClientCa> CurrentClientCa() const;  // nullptr without a client CA file
  uint64_t generation() const;
  // Changes each time new client CAs are installed (sessions of older
  // generations end: tls_sessions.h).
  const std::atomic<uint64_t>& client_ca_generation() const { return client_ca_generation_; }

  // Installs the current pair, and the client CAs, on a connection (for
  // SSL_CTX_set_cert_cb, which runs before the server asks for the client's
  // certificate).
  bool ApplyTo(SSL* ssl) const;

 private:
  bool ReloadPair();
  bool ReloadClientCa();

  std::string cert_file_, key_file_, client_ca_file_;
  std::shared_ptr<spdlog::logger> logger_;
  mutable std::mutex mu_;
  std::shared_ptr<const CertPair> current_;
  std::shared_ptr<const ClientCa> client_ca_;
  std::string cert_pem_, key_pem_, client_ca_pem_;
  uint64_t generation_ = 0;
  std::atomic<uint64_t> client_ca_generation_{1};
};

// Polls the reloader on a thread every `interval` until destroyed; calls
// `on_client_ca_change` (when given) after new client CAs were installed.
class ReloadLoop {
 public:
  ReloadLoop(CertificateReloader& reloader, std::chrono::milliseconds interval,
             std::function<void()> on_client_ca_change = nullptr);
  ~ReloadLoop();
  ReloadLoop(const ReloadLoop&) = delete;
  ReloadLoop& operator=(const ReloadLoop&) = delete;

 private:
  CertificateReloader& reloader_;
  std::chrono::milliseconds interval_;
  std::function<void()> on_client_ca_change_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

struct ServerTlsOptions {
  int min_version = TLS1_2_VERSION;  // TLS1_2_VERSION or TLS1_3_VERSION
  std::string client_ca_file;        // non-empty: require and verify a client certificate (the reloader's CAs)
  // With a client CA: the names (subject CN or DNS SAN) a client certificate
  // must carry (client_names.h); empty accepts any certificate of the CAs.
  std::vector<std::string> client_names;
  // Session-ticket keys rotate this often (ticket_keys.h), on `clock` (the
  // system clock when null; it must outlive the context).
  std::chrono::seconds ticket_key_rotation{3600};
  // No session resumes more than this long after the full handshake it
  // descends from, nor under client CAs other than the current ones
  // (tls_sessions.h).
  std::chrono::seconds session_max_age{3600};
  const clock::Clock* clock = nullptr;
};

// Configures a server SSL_CTX: protocol floor, ECDHE+AEAD ciphers only for
// TLS 1.2, no compression or renegotiation, the reloader's certificate (and
// client CAs) per handshake, client verification when asked, and a session
// id context so that sessions resume (OpenSSL refuses to resume a verified
// session without one), the allowed client names, session-ticket keys
// that rotate, and sessions that end (tls_sessions.h). Returns false and sets `error` on failure. `reloader` and
// `options` (the client names) must outlive the context.
bool ConfigureServerContext(SSL_CTX& ctx, const ServerTlsOptions& options, CertificateReloader& reloader,
                            std::string* error);

// "1.2" / "1.3" -> TLS1_2_VERSION / TLS1_3_VERSION; 0 when unknown.
int ParseTlsVersion(const std::string& s);

// The last OpenSSL error as text.
std::string LastSslError();

}  // namespace ms::transport
