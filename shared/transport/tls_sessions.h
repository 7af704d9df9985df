// How long a TLS session of the server lives, and under which client CAs.
//
// A resumed session (a ticket, in TLS 1.2 or 1.3) skips the verification of
// the client's certificate: it stands for the full handshake that verified
// it. OpenSSL dates a session anew at each resumption, and each TLS 1.3
// resumption issues a new ticket, so a chain of resumptions kept a client
// served for ever, also after its CA was removed from --client-ca. Here:
//   - each ticket carries the time of the full handshake it descends from
//     and the generation of the client CAs that verified it (OpenSSL's
//     ticket application data, kept through resumptions);
//   - a ticket older than `max_age` from that full handshake, or of client
//     CAs other than the current ones, is not resumed: a full handshake
//     follows, which verifies the certificate again;
//   - sessions are never cached in the server (tickets only), so no other
//     path resumes them;
//   - a connection whose session is no longer valid answers its next
//     request with Connection: close (and the server ends the idle ones
//     when the client CAs change: http_server.h).
#pragma once

#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <cstdint>

#include "shared/clock/clock.h"

namespace ms::transport {

// When a session began (its full handshake) and under which client CAs.
struct SessionOrigin {
  clock::Clock::TimePoint born{};
  std::uint64_t ca_generation = 0;
};

class SessionPolicy {
 public:
  // `ca_generation` changes whenever the client CAs do; both it and `clock`
  // outlive the policy.
  SessionPolicy(const clock::Clock& clock, clock::Clock::Duration max_age,
                const std::atomic<std::uint64_t>& ca_generation)
      : clock_(clock), max_age_(max_age), ca_generation_(ca_generation) {}

  // The origin of the session `ssl` has just established: the one its
  // ticket carries when it was resumed, else now and the current CAs.
  SessionOrigin OriginOf(const SSL* ssl) const;
  // Whether a session of that origin may still serve.
  bool Valid(const SessionOrigin& origin) const;

  // The ticket callbacks' work (SSL_CTX_set_session_ticket_cb).
  int OnNewTicket(SSL* ssl) const;
  SSL_TICKET_RETURN OnTicket(SSL_SESSION* session, SSL_TICKET_STATUS status) const;

 private:
  const clock::Clock& clock_;
  const clock::Clock::Duration max_age_;
  const std::atomic<std::uint64_t>& ca_generation_;
};

// Gives `ctx` a SessionPolicy (owned by the context, freed with it) and
// turns its session cache off. False when OpenSSL refuses.
bool InstallSessionPolicy(SSL_CTX& ctx, const clock::Clock& clock, clock::Clock::Duration max_age,
                          const std::atomic<std::uint64_t>& ca_generation);
// The policy installed on `ctx`, or nullptr.
const SessionPolicy* SessionPolicyOf(const SSL_CTX* ctx);

}  // namespace ms::transport
