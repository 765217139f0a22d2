// The algorithm of apr_md5_encode (Apache Portable Runtime,
// apr-util/crypto/apr_md5.c), itself FreeBSD's crypt-md5.c by Poul-Henning
// Kamp: an MD5 of password, magic and salt mixed with an MD5 of
// password+salt+password, then 1000 rounds that alternate them, written in
// crypt's base-64 alphabet in its own byte order.
#include "access/apr1.hpp"

#include <openssl/evp.h>

#include <array>
#include <memory>

namespace portico::access {

namespace {

constexpr std::string_view magic = "$apr1$";
constexpr char crypt64[] = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
using Digest = std::array<unsigned char, 16>;

class Md5 {
public:
    Md5() : context_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(context_.get(), EVP_md5(), nullptr); }
    void add(std::string_view bytes) {
        EVP_DigestUpdate(context_.get(), bytes.data(), bytes.size());
    }
    void add(const unsigned char* bytes, size_t size) {
        EVP_DigestUpdate(context_.get(), bytes, size);
    }
    Digest finish() {
        Digest digest{};
        EVP_DigestFinal_ex(context_.get(), digest.data(), nullptr);
        EVP_DigestInit_ex(context_.get(), EVP_md5(), nullptr);  // ready for the next
        return digest;
    }

private:
    struct Free {
        void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
    };
    std::unique_ptr<EVP_MD_CTX, Free> context_;
};

// Three bytes as four characters, least significant six bits first.
void append64(std::string& out, unsigned value, int characters) {
    for (int i = 0; i < characters; ++i, value >>= 6) out += crypt64[value & 0x3f];
}

}  // namespace

std::string apr1_hash(std::string_view password, std::string_view salt) {
    salt = salt.substr(0, 8);
    Md5 md5;
    md5.add(password);
    md5.add(salt);
    md5.add(password);
    Digest mixed = md5.finish();

    md5.add(password);
    md5.add(magic);
    md5.add(salt);
    for (size_t left = password.size(); left > 0; left -= std::min<size_t>(left, 16))
        md5.add(mixed.data(), std::min<size_t>(left, 16));
    // The odd part of the original: a zero byte for each 1 bit of the
    // length, the password's first character for each 0 bit.
    const unsigned char zero = 0;
    for (size_t bits = password.size(); bits != 0; bits >>= 1) {
        if ((bits & 1) != 0)
            md5.add(&zero, 1);
        else
            md5.add(password.substr(0, 1));
    }
    Digest digest = md5.finish();

    // 1000 rounds, only to slow a guesser down (1990s-slow: apr1 is weak,
    // bcrypt is the hash to use).
    for (int round = 0; round < 1000; ++round) {
        if ((round & 1) != 0)
            md5.add(password);
        else
            md5.add(digest.data(), digest.size());
        if (round % 3 != 0) md5.add(salt);
        if (round % 7 != 0) md5.add(password);
        if ((round & 1) != 0)
            md5.add(digest.data(), digest.size());
        else
            md5.add(password);
        digest = md5.finish();
    }

    std::string out(magic);
    out += salt;
    out += '$';
    auto triple = [&digest](int a, int b, int c) {
        return unsigned(digest[a]) << 16 | unsigned(digest[b]) << 8 | digest[c];
    };
    append64(out, triple(0, 6, 12), 4);
    append64(out, triple(1, 7, 13), 4);
    append64(out, triple(2, 8, 14), 4);
    append64(out, triple(3, 9, 15), 4);
    append64(out, triple(4, 10, 5), 4);
    append64(out, digest[11], 2);
    return out;
}

}  // namespace portico::access
