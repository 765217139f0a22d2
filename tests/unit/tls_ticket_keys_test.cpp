// Session ticket keys: a ticket resumes while its key is the current or the
// previous one (and is then renewed under the current key), not after two
// rotations; a rotation made in another process (the master) reaches every
// process that shares the keys (the workers). Handshakes run in memory,
// through a BIO pair, with a certificate made here.
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "tls/ticket_keys.hpp"

using portico::tls::TicketKeys;

namespace {

struct Server {
    EVP_PKEY* key = nullptr;
    X509* certificate = nullptr;
    SSL_CTX* context = nullptr;

    explicit Server(TicketKeys& keys) {
        key = EVP_EC_gen("P-256");
        certificate = X509_new();
        X509_set_version(certificate, 2);
        ASN1_INTEGER_set(X509_get_serialNumber(certificate), 1);
        X509_gmtime_adj(X509_getm_notBefore(certificate), 0);
        X509_gmtime_adj(X509_getm_notAfter(certificate), 3600);
        X509_set_pubkey(certificate, key);
        X509_NAME* name = X509_get_subject_name(certificate);
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                   reinterpret_cast<const unsigned char*>("t.test"), -1, -1, 0);
        X509_set_issuer_name(certificate, name);
        X509_sign(certificate, key, EVP_sha256());
        context = SSL_CTX_new(TLS_server_method());
        SSL_CTX_use_certificate(context, certificate);
        SSL_CTX_use_PrivateKey(context, key);
        // As ServerTls sets it up: tickets only, no session cache.
        SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_session_id_context(context, reinterpret_cast<const unsigned char*>("t"), 1);
        SSL_CTX_set_num_tickets(context, 1);
        keys.install(context);
    }
    ~Server() {
        SSL_CTX_free(context);
        X509_free(certificate);
        EVP_PKEY_free(key);
    }
};

struct Visit {
    bool reused = false;
    SSL_SESSION* next = nullptr;  // the caller frees it
};

// One handshake between a new client and `server` in memory, resuming
// `session` when set.
Visit visit(const Server& server, int version, SSL_SESSION* session) {
    SSL_CTX* client_context = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(client_context, version);
    SSL_CTX_set_max_proto_version(client_context, version);
    SSL* client = SSL_new(client_context);
    SSL* accepted = SSL_new(server.context);
    BIO* client_end = nullptr;
    BIO* server_end = nullptr;
    BIO_new_bio_pair(&client_end, 0, &server_end, 0);
    SSL_set_bio(client, client_end, client_end);
    SSL_set_bio(accepted, server_end, server_end);
    SSL_set_connect_state(client);
    SSL_set_accept_state(accepted);
    if (session) {
        // A copy: OpenSSL marks a session it resumed with TLS 1.3 as used up.
        SSL_SESSION* copy = SSL_SESSION_dup(session);
        SSL_set_session(client, copy);
        SSL_SESSION_free(copy);
    }
    bool client_done = false, server_done = false;
    for (int round = 0; round < 20 && !(client_done && server_done); ++round) {
        client_done = client_done || SSL_do_handshake(client) == 1;
        server_done = server_done || SSL_do_handshake(accepted) == 1;
    }
    REQUIRE(client_done);
    REQUIRE(server_done);
    // TLS 1.3 tickets follow the handshake: a byte each way delivers them.
    char byte = 'x';
    REQUIRE(SSL_write(accepted, &byte, 1) == 1);
    REQUIRE(SSL_read(client, &byte, 1) == 1);
    Visit result;
    result.reused = SSL_session_reused(client) == 1;
    result.next = SSL_SESSION_dup(SSL_get0_session(client));
    SSL_free(client);
    SSL_free(accepted);
    SSL_CTX_free(client_context);
    return result;
}

std::unique_ptr<TicketKeys> make_keys() {
    std::string error;
    auto keys = TicketKeys::create(error);
    REQUIRE(keys);
    return keys;
}

const char* name_of(int version) {
    return version == TLS1_3_VERSION ? "TLS 1.3" : "TLS 1.2";
}

}  // namespace

TEST_CASE("tls: a ticket resumes under the current and the previous key, not after two rotations",
          "[tls][ticket-keys]") {
    for (int version : {TLS1_3_VERSION, TLS1_2_VERSION}) {
        INFO(name_of(version));
        auto keys = make_keys();
        Server server(*keys);
        Visit first = visit(server, version, nullptr);
        REQUIRE_FALSE(first.reused);

        Visit again = visit(server, version, first.next);  // current key
        CHECK(again.reused);

        keys->rotate();
        Visit after_one = visit(server, version, first.next);  // previous key: accepted, renewed
        CHECK(after_one.reused);

        keys->rotate();
        // The original ticket's key is gone; the one renewed after the first
        // rotation is under the previous key now, and still resumes.
        Visit stale = visit(server, version, first.next);
        CHECK_FALSE(stale.reused);
        Visit renewed = visit(server, version, after_one.next);
        CHECK(renewed.reused);

        for (SSL_SESSION* session :
             {first.next, again.next, after_one.next, stale.next, renewed.next})
            SSL_SESSION_free(session);
    }
}

TEST_CASE("tls: tickets of other keys (another master) do not resume", "[tls][ticket-keys]") {
    auto keys = make_keys();
    auto others = make_keys();
    Server server(*keys);
    Server other(*others);
    for (int version : {TLS1_3_VERSION, TLS1_2_VERSION}) {
        INFO(name_of(version));
        Visit first = visit(other, version, nullptr);
        Visit elsewhere = visit(server, version, first.next);
        CHECK_FALSE(elsewhere.reused);
        SSL_SESSION_free(first.next);
        SSL_SESSION_free(elsewhere.next);
    }
}

TEST_CASE("tls: a rotation made in another process reaches this one (shared keys)",
          "[tls][ticket-keys]") {
    auto keys = make_keys();
    Server server(*keys);
    Visit first = visit(server, TLS1_3_VERSION, nullptr);
    // The "master": rotates twice and exits.
    pid_t master = ::fork();
    if (master == 0) {
        keys->rotate();
        keys->rotate();
        _exit(0);
    }
    int status = 0;
    REQUIRE(::waitpid(master, &status, 0) == master);
    REQUIRE(WIFEXITED(status));
    // This process never rotated, yet the ticket's key is two rotations old.
    Visit after = visit(server, TLS1_3_VERSION, first.next);
    CHECK_FALSE(after.reused);
    // And what it issues now resumes.
    Visit again = visit(server, TLS1_3_VERSION, after.next);
    CHECK(again.reused);
    for (SSL_SESSION* session : {first.next, after.next, again.next}) SSL_SESSION_free(session);
}
