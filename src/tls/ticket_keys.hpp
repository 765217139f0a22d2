// Session ticket keys every worker shares, so a client resumes its session
// on whichever worker the kernel hands its next connection to.
//
// The master makes the keys in a shared anonymous mapping before it forks
// any worker, and rotates them (rotation_interval): a new key encrypts new
// tickets; the previous one still decrypts, and a ticket it opens is renewed
// under the new key. Keys never touch the disk, so a restart of the master
// invalidates every ticket (a full handshake follows, nothing worse).
#pragma once

#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace portico::tls {

class TicketKeys {
public:
    static constexpr std::chrono::hours rotation_interval{12};

    // nullptr with `error` set when the mapping or the random bytes fail.
    static std::unique_ptr<TicketKeys> create(std::string& error);
    ~TicketKeys();
    TicketKeys(const TicketKeys&) = delete;
    TicketKeys& operator=(const TicketKeys&) = delete;

    // Master only: a new encryption key; the current one becomes the
    // previous. False when no random bytes could be had (the keys stay).
    bool rotate();

    // Makes `context` issue and accept tickets under these keys.
    void install(SSL_CTX* context);

private:
    struct Key {
        unsigned char name[16];
        unsigned char cipher_key[32];  // AES-256-CBC
        unsigned char hmac_key[32];    // HMAC-SHA256
    };
    // Three slots: the current key, the previous, and the one the next
    // rotation writes, so a worker never reads a key while it is written.
    struct Shared {
        std::atomic<uint32_t> current;
        Key slots[3];
    };

    explicit TicketKeys(Shared* shared) : shared_(shared) {}
    static bool fill(Key& key);
    static int on_ticket(SSL* ssl, unsigned char name[16], unsigned char* iv,
                         EVP_CIPHER_CTX* cipher, EVP_MAC_CTX* hmac, int encrypt);

    Shared* shared_;
};

}  // namespace portico::tls
