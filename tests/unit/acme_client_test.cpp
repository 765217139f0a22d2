// The ACME client's parts that need no CA: ES256 signatures and keys, the
// CSR, HTTP responses as the CA's server sends them, Retry-After, the
// renewal schedule and the shared board.
#include <openssl/ecdsa.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>

#include <ctime>

#include <catch2/catch.hpp>

#include "acme/board.hpp"
#include "acme/crypto.hpp"
#include "acme/https_client.hpp"
#include "acme/protocol.hpp"
#include "acme/renewals.hpp"

namespace acme_client_test {

using namespace portico::acme;

namespace {

std::string base64url_decode(std::string text) {
    for (char& c : text) c = c == '-' ? '+' : c == '_' ? '/' : c;
    while (text.size() % 4) text += '=';
    std::string out(text.size(), '\0');
    int length = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                 reinterpret_cast<const unsigned char*>(text.data()),
                                 static_cast<int>(text.size()));
    out.resize(static_cast<size_t>(length) - (text.ends_with("==")  ? 2
                                              : text.ends_with('=') ? 1
                                                                    : 0));
    return out;
}

}  // namespace

TEST_CASE("acme: base64url has no padding and the URL-safe alphabet", "[acme]") {
    CHECK(base64url("") == "");
    CHECK(base64url("f") == "Zg");
    CHECK(base64url("fo") == "Zm8");
    CHECK(base64url(std::string("\xfb\xff", 2)) == "-_8");
}

TEST_CASE("acme: an ES256 signature is r and s, and verifies with the key", "[acme]") {
    KeyPtr key = new_key();
    REQUIRE(key);
    std::string signature = base64url_decode(es256_signature(key.get(), "head.payload"));
    REQUIRE(signature.size() == 64);
    ECDSA_SIG* parsed = ECDSA_SIG_new();
    ECDSA_SIG_set0(
        parsed, BN_bin2bn(reinterpret_cast<const unsigned char*>(signature.data()), 32, nullptr),
        BN_bin2bn(reinterpret_cast<const unsigned char*>(signature.data()) + 32, 32, nullptr));
    unsigned char* der = nullptr;
    int der_length = i2d_ECDSA_SIG(parsed, &der);
    ECDSA_SIG_free(parsed);
    auto verify = [&](std::string_view input) {
        EVP_MD_CTX* context = EVP_MD_CTX_new();
        EVP_DigestVerifyInit(context, nullptr, EVP_sha256(), nullptr, key.get());
        int result =
            EVP_DigestVerify(context, der, static_cast<size_t>(der_length),
                             reinterpret_cast<const unsigned char*>(input.data()), input.size());
        EVP_MD_CTX_free(context);
        return result == 1;
    };
    CHECK(verify("head.payload"));
    CHECK_FALSE(verify("head.payloaD"));
    OPENSSL_free(der);
}

TEST_CASE("acme: the JWK has RFC 7638's member order and the key survives PEM", "[acme]") {
    KeyPtr key = new_key();
    std::string jwk = jwk_json(key.get());
    CHECK(jwk.starts_with(R"({"crv":"P-256","kty":"EC","x":")"));
    CHECK(jwk.size() == std::string(R"({"crv":"P-256","kty":"EC","x":"","y":""})").size() + 86);
    KeyPtr again = key_from_pem(key_pem(key.get()));
    REQUIRE(again);
    CHECK(jwk_thumbprint(again.get()) == jwk_thumbprint(key.get()));
    CHECK(jwk_thumbprint(key.get()).size() == 43);
    CHECK_FALSE(key_from_pem("not a key"));
}

TEST_CASE("acme: the CSR names every name and is signed by the certificate key", "[acme]") {
    KeyPtr key = new_key();
    std::string der = base64url_decode(csr_base64url(key.get(), {"a.test", "www.a.test"}));
    const auto* cursor = reinterpret_cast<const unsigned char*>(der.data());
    X509_REQ* request = d2i_X509_REQ(nullptr, &cursor, static_cast<long>(der.size()));
    REQUIRE(request);
    CHECK(X509_REQ_verify(request, key.get()) == 1);
    STACK_OF(X509_EXTENSION)* extensions = X509_REQ_get_extensions(request);
    auto* names = static_cast<GENERAL_NAMES*>(
        X509V3_get_d2i(extensions, NID_subject_alt_name, nullptr, nullptr));
    REQUIRE(names);
    REQUIRE(sk_GENERAL_NAME_num(names) == 2);
    const GENERAL_NAME* second = sk_GENERAL_NAME_value(names, 1);
    CHECK(std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(second->d.dNSName))) ==
          "www.a.test");
    GENERAL_NAMES_free(names);
    sk_X509_EXTENSION_pop_free(extensions, X509_EXTENSION_free);
    X509_REQ_free(request);
}

TEST_CASE("acme: the TLS-ALPN-01 certificate carries the key authorization's digest", "[acme]") {
    PemPair pair = tls_alpn_certificate("a.test", "token.thumb");
    REQUIRE_FALSE(pair.chain.empty());
    REQUIRE(key_from_pem(pair.key));
    BIO* bio = BIO_new_mem_buf(pair.chain.data(), static_cast<int>(pair.chain.size()));
    X509* certificate = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    REQUIRE(certificate);
    ASN1_OBJECT* acme_identifier = OBJ_txt2obj("1.3.6.1.5.5.7.1.31", 1);
    int index = X509_get_ext_by_OBJ(certificate, acme_identifier, -1);
    ASN1_OBJECT_free(acme_identifier);
    REQUIRE(index >= 0);
    X509_EXTENSION* extension = X509_get_ext(certificate, index);
    CHECK(X509_EXTENSION_get_critical(extension) == 1);
    const ASN1_OCTET_STRING* value = X509_EXTENSION_get_data(extension);
    unsigned char expected[2 + 32] = {0x04, 32};
    std::string authorization = "token.thumb";
    SHA256(reinterpret_cast<const unsigned char*>(authorization.data()), authorization.size(),
           expected + 2);
    REQUIRE(ASN1_STRING_length(value) == 34);
    CHECK(std::equal(expected, expected + 34, ASN1_STRING_get0_data(value)));
    CertificateFacts facts;
    REQUIRE(leaf_facts(pair.chain, facts));
    CHECK(facts.names == std::vector<std::string>{"a.test"});
    X509_free(certificate);
}

TEST_CASE("acme: responses by Content-Length, chunked or up to the close", "[acme]") {
    HttpResponse response;
    REQUIRE(
        parse_http_response("HTTP/1.1 201 Created\r\nReplay-Nonce: abc\r\nContent-Length: "
                            "2\r\n\r\n{}extra",
                            response));
    CHECK(response.status == 201);
    CHECK(response.header("replay-nonce") == "abc");
    CHECK(response.body == "{}");
    REQUIRE(parse_http_response(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=1\r\nde\r\n0\r\n\r\n",
        response));
    CHECK(response.body == "abcde");
    REQUIRE(parse_http_response("HTTP/1.0 200 OK\r\nA: b\r\n\r\nto the end", response));
    CHECK(response.body == "to the end");
    REQUIRE(parse_http_response("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", response,
                                false));
    CHECK(response.status == 204);
    CHECK_FALSE(parse_http_response("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort", response));
    CHECK_FALSE(parse_http_response("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                                    response));
    CHECK_FALSE(parse_http_response("SSH-2.0-OpenSSH\r\n\r\n", response));
    CHECK_FALSE(parse_http_response("HTTP/1.1 200 OK\r\nno colon\r\n\r\n", response));
}

TEST_CASE("acme: https URLs split into host, port and path", "[acme]") {
    Url url;
    REQUIRE(parse_https_url("https://127.0.0.1:14000/dir", url));
    CHECK(url.host == "127.0.0.1");
    CHECK(url.port == "14000");
    CHECK(url.path == "/dir");
    REQUIRE(parse_https_url("https://[::1]/", url));
    CHECK(url.host == "::1");
    CHECK(url.port == "443");
    CHECK_FALSE(parse_https_url("http://ca.test/", url));
}

TEST_CASE("acme: Retry-After in seconds or as a date", "[acme]") {
    CHECK(retry_after_seconds("") == 0);
    CHECK(retry_after_seconds("120") == 120);
    CHECK(retry_after_seconds("soon") == 0);
    std::time_t later = std::time(nullptr) + 600;
    char date[64];
    std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", std::gmtime(&later));
    CHECK(retry_after_seconds(date) >= 598);
    CHECK(retry_after_seconds(date) <= 600);
}

TEST_CASE("acme: renewal at two thirds of the lifetime, jitter only later", "[acme]") {
    // 90 days from 0: two thirds is day 60; the jitter adds up to 3 days.
    int64_t day = 86400;
    CHECK(RenewalPolicy::renewal_due_ms(0, 90 * day, 0.0) == 60 * day * 1000);
    CHECK(RenewalPolicy::renewal_due_ms(0, 90 * day, 1.0) == 63 * day * 1000);
    CHECK(RenewalPolicy::renewal_due_ms(1000, 1000 + 90 * day, 0.5) ==
          (1000 + 61 * day + day / 2) * 1000);
}

TEST_CASE("acme: errors back off exponentially, up to an hour, or as the CA asks", "[acme]") {
    CHECK(RenewalPolicy::backoff_ms(1, 0) == 2'000);
    CHECK(RenewalPolicy::backoff_ms(2, 0) == 4'000);
    CHECK(RenewalPolicy::backoff_ms(5, 0) == 32'000);
    CHECK(RenewalPolicy::backoff_ms(40, 0) == 3'600'000);
    CHECK(RenewalPolicy::backoff_ms(1, 30) == 30'000);
    CHECK(RenewalPolicy::backoff_ms(1, 86400) == 86'400'000);  // a rate limit's hours are kept
}

TEST_CASE("acme: the board hands certificates and challenges across", "[acme]") {
    std::string error;
    std::unique_ptr<Board> board = Board::create(3, error);
    REQUIRE(board);
    std::string chain, key;
    uint64_t version = 0;
    CHECK(board->version(1) == 0);
    CHECK_FALSE(board->read(1, chain, key, version));
    board->publish_certificate(1, "CHAIN", "KEY");
    uint64_t first = board->version(1);
    CHECK(first != 0);
    REQUIRE(board->read(1, chain, key, version));
    CHECK(version == first);
    CHECK(chain == "CHAIN");
    CHECK(key == "KEY");
    board->publish_certificate(1, "CHAIN2", "KEY2");
    CHECK(board->version(1) != first);
    CHECK(board->version(2) == 0);

    CHECK_FALSE(board->key_authorization("tok"));
    REQUIRE(board->publish_challenge("tok", "tok.thumb"));
    REQUIRE(board->publish_challenge("other", "other.thumb"));
    CHECK(board->key_authorization("tok") == "tok.thumb");
    CHECK_FALSE(board->key_authorization("to"));
    board->withdraw_challenge("tok");
    CHECK_FALSE(board->key_authorization("tok"));
    CHECK(board->key_authorization("other") == "other.thumb");
    CHECK_FALSE(board->publish_challenge(std::string(Board::max_token + 1, 'x'), "a"));
    for (size_t i = 1; i < Board::max_challenges; ++i)
        CHECK(board->publish_challenge("t" + std::to_string(i), "a"));
    CHECK_FALSE(board->publish_challenge("one-too-many", "a"));

    board->publish_state(0, {1234, 5678, "HTTP 500"});
    SiteState state = board->state(0);
    CHECK(state.not_after == 1234);
    CHECK(state.next_attempt == 5678);
    CHECK(state.last_error == "HTTP 500");
}

}  // namespace acme_client_test
