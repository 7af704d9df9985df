#include "shared/transport/ticket_keys.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ms::transport {

namespace {

void FreeTicketKeys(void*, void* ptr, CRYPTO_EX_DATA*, int, long, void*) { delete static_cast<TicketKeys*>(ptr); }

// The context's ex_data slot for its TicketKeys (one per process, as
// OpenSSL hands them out).
int TicketKeysIndex() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, FreeTicketKeys);
  return index;
}

int TicketKeyCallback(SSL* ssl, unsigned char key_name[16], unsigned char iv[EVP_MAX_IV_LENGTH], EVP_CIPHER_CTX* cipher,
                      EVP_MAC_CTX* mac, int enc) {
  auto* keys = static_cast<TicketKeys*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), TicketKeysIndex()));
  return keys ? keys->Callback(key_name, iv, cipher, mac, enc) : -1;
}

}  // namespace

TicketKeys::TicketKeys(const clock::Clock& clock, clock::Clock::Duration rotation)
    : clock_(clock), rotation_(rotation) {
  std::lock_guard<std::mutex> g(mu_);
  RotateIfDue();
  if (keys_.empty()) throw std::runtime_error("no random bytes for a session-ticket key");
}

uint64_t TicketKeys::keys_made() const {
  std::lock_guard<std::mutex> g(mu_);
  return made_;
}

void TicketKeys::RotateIfDue() {
  const auto now = clock_.Now();
  if (!keys_.empty() && now - keys_.front().made < rotation_) return;
  Key key;
  if (RAND_bytes(key.name.data(), static_cast<int>(key.name.size())) != 1 ||
      RAND_bytes(key.aes.data(), static_cast<int>(key.aes.size())) != 1 ||
      RAND_bytes(key.hmac.data(), static_cast<int>(key.hmac.size())) != 1)
    return;  // keep the current key; tried again on the next ticket
  key.made = now;
  // The previous key stays for one period only when it was current in the
  // period just ended; after a longer quiet time no old ticket is accepted.
  if (!keys_.empty() && now - keys_.front().made >= 2 * rotation_) keys_.clear();
  keys_.push_front(key);
  while (keys_.size() > 2) keys_.pop_back();
  ++made_;
}

bool TicketKeys::SetMacKey(EVP_MAC_CTX* mac, Key& key) {
  char digest[] = "sha256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, key.hmac.data(), key.hmac.size()),
                         OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  return EVP_MAC_CTX_set_params(mac, params) == 1;
}

int TicketKeys::Callback(unsigned char key_name[16], unsigned char* iv, EVP_CIPHER_CTX* cipher, EVP_MAC_CTX* mac,
                         int enc) {
  std::lock_guard<std::mutex> g(mu_);
  RotateIfDue();
  if (enc) {
    Key& key = keys_.front();
    const int iv_length = EVP_CIPHER_get_iv_length(EVP_aes_256_cbc());
    if (RAND_bytes(iv, iv_length) != 1) return -1;
    std::memcpy(key_name, key.name.data(), key.name.size());
    if (EVP_EncryptInit_ex(cipher, EVP_aes_256_cbc(), nullptr, key.aes.data(), iv) != 1) return -1;
    return SetMacKey(mac, key) ? 1 : -1;
  }
  const auto it = std::find_if(keys_.begin(), keys_.end(),
                               [&](const Key& k) { return std::memcmp(k.name.data(), key_name, k.name.size()) == 0; });
  if (it == keys_.end()) return 0;
  if (!SetMacKey(mac, *it)) return -1;
  if (EVP_DecryptInit_ex(cipher, EVP_aes_256_cbc(), nullptr, it->aes.data(), iv) != 1) return -1;
  return it == keys_.begin() ? 1 : 2;
}

bool InstallTicketKeys(SSL_CTX& ctx, const clock::Clock& clock, clock::Clock::Duration rotation) {
  const int index = TicketKeysIndex();
  if (index < 0) return false;
  auto keys = std::make_unique<TicketKeys>(clock, rotation);
  if (SSL_CTX_set_ex_data(&ctx, index, keys.get()) != 1) return false;
  keys.release();  // the context owns it now (FreeTicketKeys)
  SSL_CTX_set_timeout(&ctx, static_cast<long>(std::chrono::duration_cast<std::chrono::seconds>(rotation).count()));
  return SSL_CTX_set_tlsext_ticket_key_evp_cb(&ctx, TicketKeyCallback) == 1;
}

}  // namespace ms::transport
