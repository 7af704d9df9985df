// Session-ticket keys that rotate. OpenSSL makes one random ticket key per
// context and keeps it for the context's life, so a key that leaked once
// decrypts every later ticket (and so every resumed session's secrets).
// Here a new key is made every `rotation`; tickets of the previous key are
// still accepted, and replaced by one of the current key, until the next
// rotation; older ones make a full handshake. Go's crypto/tls rotates its
// ticket keys the same way.
#pragma once

#include <openssl/ssl.h>

#include <array>
#include <cstdint>
#include <deque>
#include <mutex>

#include "shared/clock/clock.h"

namespace ms::transport {

class TicketKeys {
 public:
  TicketKeys(const clock::Clock& clock, clock::Clock::Duration rotation);

  // The work of SSL_CTX_set_tlsext_ticket_key_evp_cb's callback: `enc` 1
  // encrypts a new ticket with the current key (returns 1), 0 finds the key a
  // ticket names (1: current; 2: the previous one, renew the ticket; 0:
  // unknown, full handshake). -1 on an OpenSSL error.
  int Callback(unsigned char key_name[16], unsigned char* iv, EVP_CIPHER_CTX* cipher, EVP_MAC_CTX* mac, int enc);

  uint64_t keys_made() const;

 private:
  struct Key {
    std::array<unsigned char, 16> name{};
    std::array<unsigned char, 32> aes{};
    std::array<unsigned char, 32> hmac{};
    clock::Clock::TimePoint made;
  };
  void RotateIfDue();  // with mu_ held
  static bool SetMacKey(EVP_MAC_CTX* mac, Key& key);

  const clock::Clock& clock_;
  const clock::Clock::Duration rotation_;
  mutable std::mutex mu_;
  std::deque<Key> keys_;  // current first, then the previous one
  uint64_t made_ = 0;
};

// Gives the context a TicketKeys (owned by the context, freed with it) and
// a session lifetime of `rotation`. `clock` must outlive the context.
// Returns false when OpenSSL refuses.
bool InstallTicketKeys(SSL_CTX& ctx, const clock::Clock& clock, clock::Clock::Duration rotation);

}  // namespace ms::transport
