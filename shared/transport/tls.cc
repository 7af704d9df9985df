#include "shared/transport/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>

#include <stdexcept>

#include "shared/process/files.h"
#include "shared/transport/client_names.h"
#include "shared/transport/ticket_keys.h"
#include "shared/transport/tls_sessions.h"

namespace ms::transport {

namespace {

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};

std::chrono::system_clock::time_point NotAfter(X509* cert) {
  const ASN1_TIME* t = X509_get0_notAfter(cert);
  struct tm tm {};
  if (ASN1_TIME_to_tm(t, &tm) != 1) return {};
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

int CertCallback(SSL* ssl, void* arg) {
  auto* reloader = static_cast<CertificateReloader*>(arg);
  return reloader->ApplyTo(ssl) ? 1 : 0;
}

}  // namespace

std::string LastSslError() {
  unsigned long e = ERR_get_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

std::shared_ptr<const CertPair> LoadCertPair(const std::string& cert_pem, const std::string& key_pem) {
  auto pair = std::make_shared<CertPair>();
  std::unique_ptr<BIO, BioDeleter> cbio(BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())));
  pair->cert.reset(PEM_read_bio_X509(cbio.get(), nullptr, nullptr, nullptr));
  if (!pair->cert) {
    ERR_clear_error();
    throw std::runtime_error("no PEM certificate found");
  }
  pair->chain.reset(sk_X509_new_null());
  while (X509* extra = PEM_read_bio_X509(cbio.get(), nullptr, nullptr, nullptr)) sk_X509_push(pair->chain.get(), extra);
  ERR_clear_error();  // the loop ends with a "no start line" error

  std::unique_ptr<BIO, BioDeleter> kbio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
  pair->key.reset(PEM_read_bio_PrivateKey(kbio.get(), nullptr, nullptr, nullptr));
  if (!pair->key) {
    ERR_clear_error();
    throw std::runtime_error("no PEM private key found");
  }
  if (X509_check_private_key(pair->cert.get(), pair->key.get()) != 1) {
    ERR_clear_error();
    throw std::runtime_error("the private key does not match the certificate");
  }
  pair->not_after = NotAfter(pair->cert.get());
  char name[512];
  X509_NAME_oneline(X509_get_subject_name(pair->cert.get()), name, sizeof name);
  pair->subject = name;
  return pair;
}

std::shared_ptr<const ClientCa> LoadClientCa(const std::string& pem) {
  auto ca = std::make_shared<ClientCa>();
  ca->store.reset(X509_STORE_new());
  ca->names.reset(sk_X509_NAME_new_null());
  if (!ca->store || !ca->names) throw std::runtime_error("out of memory");
  std::unique_ptr<BIO, BioDeleter> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  while (X509* raw = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    std::unique_ptr<X509, X509Deleter> cert(raw);
    X509_STORE_add_cert(ca->store.get(), cert.get());  // takes its own reference
    if (X509_NAME* name = X509_NAME_dup(X509_get_subject_name(cert.get()))) sk_X509_NAME_push(ca->names.get(), name);
    ++ca->count;
  }
  ERR_clear_error();  // the loop ends with a "no start line" error
  if (ca->count == 0) throw std::runtime_error("no PEM certificate found");
  return ca;
}

CertificateReloader::CertificateReloader(std::string cert_file, std::string key_file,
                                         std::shared_ptr<spdlog::logger> logger, std::string client_ca_file)
    : cert_file_(std::move(cert_file)),
      key_file_(std::move(key_file)),
      client_ca_file_(std::move(client_ca_file)),
      logger_(std::move(logger)) {
  cert_pem_ = process::ReadFile(cert_file_);
  key_pem_ = process::ReadFile(key_file_);
  try {
    current_ = LoadCertPair(cert_pem_, key_pem_);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot load " + cert_file_ + " and " + key_file_ + ": " + e.what());
  }
  if (!client_ca_file_.empty()) {
    client_ca_pem_ = process::ReadFile(client_ca_file_);
    try {
      client_ca_ = LoadClientCa(client_ca_pem_);
    } catch (const std::exception& e) {
      throw std::runtime_error("cannot load the client CA " + client_ca_file_ + ": " + e.what());
    }
  }
  generation_ = 1;
  if (current_->not_after < std::chrono::system_clock::now() && logger_)
    logger_->error("serving certificate {} has expired; clients will refuse it", current_->subject);
}

CertificateReloader::CertificateReloader(const InMemory& pair, std::shared_ptr<spdlog::logger> logger)
    : logger_(std::move(logger)), current_(LoadCertPair(pair.cert_pem, pair.key_pem)) {
  cert_pem_ = pair.cert_pem;
  key_pem_ = pair.key_pem;
  generation_ = 1;
}

bool CertificateReloader::ReloadIfChanged() {
  const bool pair = ReloadPair();
  const bool ca = ReloadClientCa();
  return pair || ca;
}

bool CertificateReloader::ReloadClientCa() {
  if (client_ca_file_.empty()) return false;
  std::string pem;
  try {
    pem = process::ReadFile(client_ca_file_);
  } catch (const std::exception& e) {
    if (logger_) logger_->warn("client CA reload: {}; keeping the current client CAs", e.what());
    return false;
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    if (pem == client_ca_pem_) return false;
  }
  std::shared_ptr<const ClientCa> ca;
  try {
    ca = LoadClientCa(pem);
  } catch (const std::exception& e) {
    if (logger_) logger_->warn("client CA reload: {}: {}; keeping the current client CAs", client_ca_file_, e.what());
    return false;
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    client_ca_ = ca;
    client_ca_pem_ = std::move(pem);
    ++generation_;
    ++client_ca_generation_;
  }
  if (logger_) logger_->info("loaded new client CAs from {} ({} certificates)", client_ca_file_, ca->count);
  return true;
}

bool CertificateReloader::ReloadPair() {
  if (cert_file_.empty()) return false;  // in memory
  std::string cert, key;
  try {
    cert = process::ReadFile(cert_file_);
    key = process::ReadFile(key_file_);
  } catch (const std::exception& e) {
    if (logger_) logger_->warn("certificate reload: {}; keeping the current certificate", e.what());
    return false;
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    if (cert == cert_pem_ && key == key_pem_) return false;
  }
  std::shared_ptr<const CertPair> pair;
  try {
    pair = LoadCertPair(cert, key);
  } catch (const std::exception& e) {
    // Typically a rotation caught half-way (new cert, old key): try again at
    // the next poll.
    if (logger_) logger_->warn("certificate reload: {}; keeping the current certificate", e.what());
    return false;
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    current_ = pair;
    cert_pem_ = std::move(cert);
    key_pem_ = std::move(key);
    ++generation_;
  }
  if (logger_) {
    logger_->info("loaded a new serving certificate: {}", pair->subject);
    if (pair->not_after < std::chrono::system_clock::now())
      logger_->error("serving certificate {} has expired; clients will refuse it", pair->subject);
  }
  return true;
}

std::shared_ptr<const CertPair> CertificateReloader::Current() const {
  std::lock_guard<std::mutex> g(mu_);
  return current_;
}

std::shared_ptr<const ClientCa> CertificateReloader::CurrentClientCa() const {
  std::lock_guard<std::mutex> g(mu_);
  return client_ca_;
}

uint64_t CertificateReloader::generation() const {
  std::lock_guard<std::mutex> g(mu_);
  return generation_;
}

bool CertificateReloader::ApplyTo(SSL* ssl) const {
  auto pair = Current();
  // SSL_use_cert_and_key takes its own references; the pair may be replaced
  // right after without affecting this connection.
  if (SSL_use_cert_and_key(ssl, pair->cert.get(), pair->key.get(), pair->chain.get(), 1) != 1) return false;
  if (auto ca = CurrentClientCa()) {
    // Both take their own references or copies.
    if (SSL_set1_verify_cert_store(ssl, ca->store.get()) != 1) return false;
    STACK_OF(X509_NAME)* names = SSL_dup_CA_list(ca->names.get());
    if (!names) return false;
    SSL_set_client_CA_list(ssl, names);
  }
  return true;
}

ReloadLoop::ReloadLoop(CertificateReloader& reloader, std::chrono::milliseconds interval,
                       std::function<void()> on_client_ca_change)
    : reloader_(reloader), interval_(interval), on_client_ca_change_(std::move(on_client_ca_change)) {
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, interval_, [this] { return stop_; });
      if (stop_) break;
      lock.unlock();
      const uint64_t cas = reloader_.client_ca_generation().load();
      reloader_.ReloadIfChanged();
      if (on_client_ca_change_ && reloader_.client_ca_generation().load() != cas) on_client_ca_change_();
      lock.lock();
    }
  });
}

ReloadLoop::~ReloadLoop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool ConfigureServerContext(SSL_CTX& ctx, const ServerTlsOptions& options, CertificateReloader& reloader,
                            std::string* error) {
  auto fail = [&](const std::string& what) {
    if (error) *error = what + ": " + LastSslError();
    return false;
  };
  if (SSL_CTX_set_min_proto_version(&ctx, options.min_version) != 1) return fail("cannot set the minimum TLS version");
  // Idle connections give their read and write buffers back (about 34 KiB
  // each otherwise).
  SSL_CTX_set_mode(&ctx, SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                                SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION);
  // TLS 1.2: forward secrecy and AEAD only (the TLS 1.3 suites are all AEAD).
  if (SSL_CTX_set_cipher_list(&ctx,
                              "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                              "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                              "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305") != 1)
    return fail("cannot set the cipher list");
  // The initial pair on the context too (some clients probe it), then the
  // per-handshake callback for rotation.
  auto pair = reloader.Current();
  if (SSL_CTX_use_cert_and_key(&ctx, pair->cert.get(), pair->key.get(), pair->chain.get(), 1) != 1)
    return fail("cannot install the certificate");
  SSL_CTX_set_cert_cb(&ctx, CertCallback, &reloader);
  // Resumed sessions (TLS 1.2 ids and tickets, TLS 1.3 tickets) are bound to
  // this context; OpenSSL refuses to resume a session whose client was
  // verified when none is set ("session id context uninitialized").
  static constexpr unsigned char kSessionContext[] = "modelservice-webhook";
  if (SSL_CTX_set_session_id_context(&ctx, kSessionContext, sizeof kSessionContext - 1) != 1)
    return fail("cannot set the session id context");
  if (!options.client_ca_file.empty()) {
    // The CAs themselves come from the reloader, per handshake.
    if (!reloader.CurrentClientCa()) {
      if (error) *error = "client CA " + options.client_ca_file + " was not loaded";
      return false;
    }
    SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    RequireClientNames(ctx, options.client_names);
  }
  static const clock::SystemClock system_clock;  // stateless
  const clock::Clock& clock = options.clock ? *options.clock : system_clock;
  try {
    if (!InstallTicketKeys(ctx, clock, options.ticket_key_rotation))
      return fail("cannot install the session-ticket keys");
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  if (!InstallSessionPolicy(ctx, clock, options.session_max_age, reloader.client_ca_generation()))
    return fail("cannot install the session policy");
  return true;
}

int ParseTlsVersion(const std::string& s) {
  if (s == "1.2" || s == "VersionTLS12") return TLS1_2_VERSION;
  if (s == "1.3" || s == "VersionTLS13") return TLS1_3_VERSION;
  return 0;
}

}  // namespace ms::transport
