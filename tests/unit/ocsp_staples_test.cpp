// OCSP stapling's pieces: the fetch schedule, the board that hands
// responses to the workers, and the workers' status callback (a real
// handshake in memory between an OpenSSL client asking for a staple and a
// context the Stapler installed on).
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <ctime>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "acme/https_client.hpp"
#include "acme/ocsp.hpp"
#include "acme/staple_board.hpp"
#include "acme/staples.hpp"
#include "tls/ocsp_stapling.hpp"

using namespace portico::acme;
using portico::tls::CertificateDigest;
using portico::tls::Stapler;

namespace {

constexpr int64_t minute = 60, hour = 3600, day = 86400;

// A fake feed: one slot, as the test sets it.
struct Feed : portico::tls::StapleFeed {
    uint64_t current = 0;
    std::string response;
    CertificateDigest certificate{};
    int64_t next_update = 0;
    uint64_t version(size_t) const override { return current; }
    bool read(size_t, std::string& out, CertificateDigest& about, int64_t& next,
              uint64_t& version) const override {
        out = response;
        about = certificate;
        next = next_update;
        version = current;
        return current != 0 && !response.empty();
    }
};

// A server context with a fresh self-signed P-256 certificate.
SSL_CTX* server_context() {
    EVP_PKEY* key = EVP_EC_gen("P-256");
    X509* certificate = X509_new();
    X509_set_version(certificate, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(certificate), 1);
    X509_gmtime_adj(X509_getm_notBefore(certificate), 0);
    X509_gmtime_adj(X509_getm_notAfter(certificate), day);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(certificate), "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("staple.test"), -1, -1, 0);
    X509_set_issuer_name(certificate, X509_get_subject_name(certificate));
    X509_set_pubkey(certificate, key);
    X509_sign(certificate, key, EVP_sha256());
    SSL_CTX* context = SSL_CTX_new(TLS_server_method());
    SSL_CTX_use_certificate(context, certificate);
    SSL_CTX_use_PrivateKey(context, key);
    X509_free(certificate);
    EVP_PKEY_free(key);
    return context;
}

int remember_staple(SSL* ssl, void* seen) {
    const unsigned char* bytes = nullptr;
    long length = SSL_get_tlsext_status_ocsp_resp(ssl, &bytes);
    *static_cast<std::string*>(seen) =
        length > 0 ? std::string(reinterpret_cast<const char*>(bytes), static_cast<size_t>(length))
                   : "";
    return 1;
}

// A handshake in memory with `server`; the staple the client received
// ("" for none). `ask`: the client sends status_request.
std::string staple_received(SSL_CTX* server, bool ask, int version = TLS1_3_VERSION) {
    std::string seen = "unset";
    SSL_CTX* client_context = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(client_context, version);
    SSL_CTX_set_max_proto_version(client_context, version);
    SSL_CTX_set_tlsext_status_cb(client_context, remember_staple);
    SSL_CTX_set_tlsext_status_arg(client_context, &seen);
    SSL* client = SSL_new(client_context);
    SSL* server_ssl = SSL_new(server);
    if (ask) SSL_set_tlsext_status_type(client, TLSEXT_STATUSTYPE_ocsp);
    BIO *client_end = nullptr, *server_end = nullptr;
    BIO_new_bio_pair(&client_end, 0, &server_end, 0);
    SSL_set_bio(client, client_end, client_end);
    SSL_set_bio(server_ssl, server_end, server_end);
    SSL_set_connect_state(client);
    SSL_set_accept_state(server_ssl);
    bool client_done = false, server_done = false;
    for (int turn = 0; turn < 20 && !(client_done && server_done); ++turn) {
        if (!client_done) client_done = SSL_do_handshake(client) == 1;
        if (!server_done) server_done = SSL_do_handshake(server_ssl) == 1;
    }
    REQUIRE(client_done);
    REQUIRE(server_done);
    SSL_free(client);
    SSL_free(server_ssl);
    SSL_CTX_free(client_context);
    return seen == "unset" ? "" : seen;
}

}  // namespace

TEST_CASE("ocsp: a response is fetched again at half its validity, or 5 minutes before it ends",
          "[ocsp]") {
    int64_t now = 1'000'000;  // seconds
    // A week's validity: at half of it.
    CHECK(StaplePolicy::refresh_due_ms(now * 1000, now, now + 7 * day) ==
          (now + 7 * day / 2) * 1000);
    // A response made an hour ago for a day: half a day after it was made.
    CHECK(StaplePolicy::refresh_due_ms(now * 1000, now - hour, now - hour + day) ==
          (now - hour + day / 2) * 1000);
    // Eight minutes: five minutes before the end comes before the half.
    CHECK(StaplePolicy::refresh_due_ms(now * 1000, now, now + 8 * minute) ==
          (now + 3 * minute) * 1000);
    // A minute: never sooner than 10 s after this fetch.
    CHECK(StaplePolicy::refresh_due_ms(now * 1000, now, now + minute) == now * 1000 + 10'000);
    // Already past its nextUpdate: 10 s too.
    CHECK(StaplePolicy::refresh_due_ms(now * 1000, now - day, now - hour) == now * 1000 + 10'000);
    // No nextUpdate: an hour later.
    CHECK(StaplePolicy::refresh_due_ms(now * 1000, now, 0) == (now + hour) * 1000);
}

TEST_CASE("ocsp: failed fetches are retried after 2 s, doubling up to 5 minutes", "[ocsp]") {
    CHECK(StaplePolicy::retry_ms(1) == 2'000);
    CHECK(StaplePolicy::retry_ms(2) == 4'000);
    CHECK(StaplePolicy::retry_ms(5) == 32'000);
    CHECK(StaplePolicy::retry_ms(8) == 256'000);
    CHECK(StaplePolicy::retry_ms(9) == 300'000);
    CHECK(StaplePolicy::retry_ms(100) == 300'000);
}

TEST_CASE("ocsp: the staple board hands responses and their state across", "[ocsp]") {
    std::string error;
    std::unique_ptr<StapleBoard> board = StapleBoard::create(2, error);
    REQUIRE(board);
    std::string response;
    CertificateDigest about{};
    int64_t next_update = 0;
    uint64_t version = 0;
    CHECK(board->version(1) == 0);
    CHECK_FALSE(board->read(1, response, about, next_update, version));

    Staple staple;
    staple.certificate[0] = 7;
    staple.response = std::string("\x30\x82\x01\x00", 4) + std::string(300, 'r');
    staple.status = "good";
    staple.this_update = 100;
    staple.next_update = 200;
    staple.next_fetch = 150;
    board->publish(1, staple);
    CHECK(board->version(0) == 0);
    uint64_t first = board->version(1);
    CHECK(first != 0);
    REQUIRE(board->read(1, response, about, next_update, version));
    CHECK(version == first);
    CHECK(response == staple.response);
    CHECK(about == staple.certificate);
    CHECK(next_update == 200);
    Staple state = board->state(1);
    CHECK(state.status == "good");
    CHECK(state.this_update == 100);
    CHECK(state.next_fetch == 150);
    CHECK(state.last_error.empty());
    CHECK(state.response.empty());  // /stats does not copy it

    // A failure keeps the response and says why.
    staple.last_error = "cannot fetch";
    board->publish(1, staple);
    CHECK(board->version(1) != first);
    CHECK(board->state(1).last_error == "cannot fetch");
    REQUIRE(board->read(1, response, about, next_update, version));

    // Too long for the slot: published without a response.
    staple.response.assign(StapleBoard::max_response + 1, 'x');
    board->publish(1, staple);
    CHECK_FALSE(board->read(1, response, about, next_update, version));
}

TEST_CASE("ocsp: the staple goes out only when asked, for its own certificate, until nextUpdate",
          "[ocsp]") {
    Feed feed;
    SSL_CTX* context = server_context();
    Stapler stapler(feed, 1);
    stapler.install(context, 0);
    // Nothing published yet: no staple, the handshake goes on.
    CHECK(staple_received(context, true) == "");

    feed.current = 1;
    feed.response = "a DER response";
    feed.certificate = portico::tls::digest_of(SSL_CTX_get0_certificate(context));
    CHECK(staple_received(context, true) == "a DER response");
    CHECK(staple_received(context, true, TLS1_2_VERSION) == "a DER response");
    CHECK(staple_received(context, false) == "");

    // A new version is read at the next handshake.
    feed.current = 2;
    feed.response = "a newer response";
    feed.next_update = std::time(nullptr) + hour;
    CHECK(staple_received(context, true) == "a newer response");

    // Expired: not stapled.
    feed.current = 3;
    feed.next_update = std::time(nullptr) - 1;
    CHECK(staple_received(context, true) == "");

    // About another certificate (the context's was renewed meanwhile): not stapled.
    feed.current = 4;
    feed.next_update = 0;
    feed.certificate[0] ^= 1;
    CHECK(staple_received(context, true) == "");
    SSL_CTX_free(context);
}

TEST_CASE(
    "ocsp: a responder's answer that is not an OCSP response is refused, and http:// URLs "
    "are split",
    "[ocsp]") {
    OcspAnswer answer;
    CHECK(check_ocsp_response("<html>not found</html>", nullptr, nullptr, nullptr, answer) ==
          "the responder's answer is not an OCSP response");
    CHECK(check_ocsp_response("", nullptr, nullptr, nullptr, answer) ==
          "the responder's answer is not an OCSP response");
    Url url;
    REQUIRE(parse_http_url("http://127.0.0.1:8888/ocsp", url));
    CHECK(url.host == "127.0.0.1");
    CHECK(url.port == "8888");
    CHECK(url.path == "/ocsp");
    CHECK_FALSE(url.tls);
    REQUIRE(parse_http_url("http://ocsp.example.com", url));
    CHECK(url.port == "80");
    CHECK(url.path == "/");
    CHECK_FALSE(parse_http_url("https://ocsp.example.com/", url));
    REQUIRE(parse_https_url("https://ocsp.example.com/", url));
    CHECK(url.tls);
}
