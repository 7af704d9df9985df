#include "shared/transport/tls_sessions.h"

#include <array>
#include <cstring>
#include <memory>

namespace ms::transport {

namespace {

// A ticket's application data: a tag, the full handshake's time
// (nanoseconds of the clock's steady time) and the client CAs' generation.
constexpr std::array<unsigned char, 4> kTag = {'m', 's', 's', '1'};
constexpr size_t kAppDataSize = kTag.size() + 2 * sizeof(std::uint64_t);

bool Decode(const SSL_SESSION* session, SessionOrigin* origin) {
  void* data = nullptr;
  size_t size = 0;
  // OpenSSL's getter takes a non-const session and does not change it.
  if (SSL_SESSION_get0_ticket_appdata(const_cast<SSL_SESSION*>(session), &data, &size) != 1 || size != kAppDataSize ||
      std::memcmp(data, kTag.data(), kTag.size()) != 0)
    return false;
  std::int64_t born = 0;
  std::memcpy(&born, static_cast<const unsigned char*>(data) + kTag.size(), sizeof born);
  std::memcpy(&origin->ca_generation, static_cast<const unsigned char*>(data) + kTag.size() + sizeof born,
              sizeof origin->ca_generation);
  origin->born =
      clock::Clock::TimePoint(std::chrono::duration_cast<clock::Clock::Duration>(std::chrono::nanoseconds(born)));
  return true;
}

bool Encode(SSL_SESSION* session, const SessionOrigin& origin) {
  std::array<unsigned char, kAppDataSize> data{};
  const std::int64_t born =
      std::chrono::duration_cast<std::chrono::nanoseconds>(origin.born.time_since_epoch()).count();
  std::memcpy(data.data(), kTag.data(), kTag.size());
  std::memcpy(data.data() + kTag.size(), &born, sizeof born);
  std::memcpy(data.data() + kTag.size() + sizeof born, &origin.ca_generation, sizeof origin.ca_generation);
  return SSL_SESSION_set1_ticket_appdata(session, data.data(), data.size()) == 1;
}

void FreePolicy(void*, void* ptr, CRYPTO_EX_DATA*, int, long, void*) { delete static_cast<SessionPolicy*>(ptr); }

int PolicyIndex() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, FreePolicy);
  return index;
}

int GenerateTicket(SSL* ssl, void* arg) { return static_cast<const SessionPolicy*>(arg)->OnNewTicket(ssl); }

SSL_TICKET_RETURN DecryptTicket(SSL*, SSL_SESSION* session, const unsigned char*, size_t, SSL_TICKET_STATUS status,
                                void* arg) {
  return static_cast<const SessionPolicy*>(arg)->OnTicket(session, status);
}

}  // namespace

SessionOrigin SessionPolicy::OriginOf(const SSL* ssl) const {
  SessionOrigin origin;
  const SSL_SESSION* session = SSL_get_session(ssl);
  if (session && Decode(session, &origin)) return origin;
  return SessionOrigin{clock_.Now(), ca_generation_.load()};
}

bool SessionPolicy::Valid(const SessionOrigin& origin) const {
  return origin.ca_generation == ca_generation_.load() && clock_.Now() - origin.born < max_age_;
}

// A ticket for a session that came from a full handshake records it; one
// for a resumed session keeps the origin its ticket carried.
int SessionPolicy::OnNewTicket(SSL* ssl) const {
  SSL_SESSION* session = SSL_get_session(ssl);
  if (!session) return 0;
  SessionOrigin origin;
  if (Decode(session, &origin)) return 1;
  return Encode(session, SessionOrigin{clock_.Now(), ca_generation_.load()}) ? 1 : 0;
}

SSL_TICKET_RETURN SessionPolicy::OnTicket(SSL_SESSION* session, SSL_TICKET_STATUS status) const {
  switch (status) {
    case SSL_TICKET_SUCCESS:
    case SSL_TICKET_SUCCESS_RENEW: {
      SessionOrigin origin;
      // A ticket without an origin, too old, or of other client CAs: a full
      // handshake, and a new ticket after it.
      if (!Decode(session, &origin) || !Valid(origin)) return SSL_TICKET_RETURN_IGNORE_RENEW;
      return status == SSL_TICKET_SUCCESS_RENEW ? SSL_TICKET_RETURN_USE_RENEW : SSL_TICKET_RETURN_USE;
    }
    case SSL_TICKET_FATAL_ERR_MALLOC:
    case SSL_TICKET_FATAL_ERR_OTHER:
      return SSL_TICKET_RETURN_ABORT;
    default:  // no ticket, or one that does not decrypt (another key)
      return SSL_TICKET_RETURN_IGNORE_RENEW;
  }
}

bool InstallSessionPolicy(SSL_CTX& ctx, const clock::Clock& clock, clock::Clock::Duration max_age,
                          const std::atomic<std::uint64_t>& ca_generation) {
  const int index = PolicyIndex();
  if (index < 0) return false;
  auto policy = std::make_unique<SessionPolicy>(clock, max_age, ca_generation);
  if (SSL_CTX_set_session_ticket_cb(&ctx, GenerateTicket, DecryptTicket, policy.get()) != 1) return false;
  if (SSL_CTX_set_ex_data(&ctx, index, policy.get()) != 1) return false;
  policy.release();  // the context owns it now (FreePolicy)
  // Tickets only: a session cached here would resume by its id without
  // passing through the ticket callbacks.
  SSL_CTX_set_session_cache_mode(&ctx, SSL_SESS_CACHE_OFF);
  return true;
}

const SessionPolicy* SessionPolicyOf(const SSL_CTX* ctx) {
  return ctx ? static_cast<const SessionPolicy*>(SSL_CTX_get_ex_data(ctx, PolicyIndex())) : nullptr;
}

}  // namespace ms::transport
