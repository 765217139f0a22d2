#include "tls/ticket_keys.hpp"

#include <sys/mman.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace portico::tls {

namespace {

int keys_index() {
    static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
    return index;
}

}  // namespace

std::unique_ptr<TicketKeys> TicketKeys::create(std::string& error) {
    void* memory = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) {
        error = std::string("mmap: ") + std::strerror(errno);
        return nullptr;
    }
    auto* shared = new (memory) Shared{};
    std::unique_ptr<TicketKeys> keys(new TicketKeys(shared));
    // The previous slot too: a random name no ticket carries.
    for (Key& key : shared->slots) {
        if (!fill(key)) {
            error = "no random bytes for the session ticket keys (RAND_bytes failed)";
            return nullptr;
        }
    }
    shared->current.store(0, std::memory_order_release);
    return keys;
}

TicketKeys::~TicketKeys() { ::munmap(shared_, sizeof(Shared)); }

bool TicketKeys::fill(Key& key) {
    return RAND_bytes(key.name, sizeof key.name) == 1 &&
           RAND_bytes(key.cipher_key, sizeof key.cipher_key) == 1 &&
           RAND_bytes(key.hmac_key, sizeof key.hmac_key) == 1;
}

bool TicketKeys::rotate() {
    uint32_t next = (shared_->current.load(std::memory_order_relaxed) + 1) % 3;
    if (!fill(shared_->slots[next])) return false;
    shared_->current.store(next, std::memory_order_release);
    return true;
}

void TicketKeys::install(SSL_CTX* context) {
    SSL_CTX_set_ex_data(context, keys_index(), this);
    SSL_CTX_set_tlsext_ticket_key_evp_cb(context, on_ticket);
}

// OpenSSL's contract: encrypting, fill the key name and IV and set both
// contexts up, return 1; decrypting, return 0 for an unknown name (full
// handshake), 1 to accept it, 2 to accept it and send a new ticket.
// A new one goes out for an older key, and for every TLS 1.3 resumption:
// TLS 1.3 clients use a ticket once (RFC 8446 C.4), so without a fresh one
// every other connection would be a full handshake (nginx renews only old
// keys' tickets).
int TicketKeys::on_ticket(SSL* ssl, unsigned char name[16], unsigned char* iv,
                          EVP_CIPHER_CTX* cipher, EVP_MAC_CTX* hmac, int encrypt) {
    auto* self = static_cast<TicketKeys*>(
        SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), keys_index()));
    if (self == nullptr) return 0;
    uint32_t current = self->shared_->current.load(std::memory_order_acquire);
    const Key* key = &self->shared_->slots[current];
    int found = SSL_version(ssl) == TLS1_3_VERSION ? 2 : 1;
    if (encrypt) {
        std::memcpy(name, key->name, sizeof key->name);
        if (RAND_bytes(iv, EVP_MAX_IV_LENGTH) != 1) return -1;
    } else if (std::memcmp(name, key->name, sizeof key->name) != 0) {
        key = &self->shared_->slots[(current + 2) % 3];
        if (std::memcmp(name, key->name, sizeof key->name) != 0) return 0;
        found = 2;
    }
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY,
                                          const_cast<unsigned char*>(key->hmac_key),
                                          sizeof key->hmac_key),
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>("SHA256"), 0),
        OSSL_PARAM_construct_end(),
    };
    if (EVP_MAC_CTX_set_params(hmac, params) != 1) return -1;
    int ok = encrypt ? EVP_EncryptInit_ex(cipher, EVP_aes_256_cbc(), nullptr, key->cipher_key, iv)
                     : EVP_DecryptInit_ex(cipher, EVP_aes_256_cbc(), nullptr, key->cipher_key, iv);
    return ok == 1 ? found : -1;
}

}  // namespace portico::tls
