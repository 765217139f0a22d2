#include "acme/ocsp.hpp"

#include <openssl/ocsp.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>

#include "tls/openssl_error.hpp"

namespace portico::acme {

namespace {

template <typename T, void (*Free)(T*)>
using Owned = std::unique_ptr<T, decltype([](T* p) { Free(p); })>;
using CertId = Owned<OCSP_CERTID, OCSP_CERTID_free>;
using Store = Owned<X509_STORE, X509_STORE_free>;
using Response = Owned<OCSP_RESPONSE, OCSP_RESPONSE_free>;
using Basic = Owned<OCSP_BASICRESP, OCSP_BASICRESP_free>;
using Request = Owned<OCSP_REQUEST, OCSP_REQUEST_free>;

// A response this old or this far ahead is still taken (clocks differ).
constexpr long clock_leeway_seconds = 300;

int64_t unix_seconds(const ASN1_GENERALIZEDTIME* time) {
    struct tm parts {};
    if (!time || ASN1_TIME_to_tm(time, &parts) != 1) return 0;
    return static_cast<int64_t>(timegm(&parts));
}

}  // namespace

std::string ocsp_responder_of(X509* leaf) {
    STACK_OF(OPENSSL_STRING)* urls = X509_get1_ocsp(leaf);
    std::string url = sk_OPENSSL_STRING_num(urls) > 0 ? sk_OPENSSL_STRING_value(urls, 0) : "";
    X509_email_free(urls);
    return url;
}

X509* issuer_in(X509* leaf, STACK_OF(X509) * chain) {
    for (int i = 0; i < sk_X509_num(chain); ++i)
        if (X509_check_issued(sk_X509_value(chain, i), leaf) == X509_V_OK)
            return sk_X509_value(chain, i);
    return nullptr;
}

std::string ocsp_request(X509* leaf, X509* issuer) {
    Request request(OCSP_REQUEST_new());
    OCSP_CERTID* id = OCSP_cert_to_id(nullptr, leaf, issuer);
    if (!request || !id || !OCSP_request_add0_id(request.get(), id)) {
        OCSP_CERTID_free(id);
        tls::clear_openssl_errors();
        return {};
    }
    int length = i2d_OCSP_REQUEST(request.get(), nullptr);
    if (length <= 0) return {};
    std::string der(static_cast<size_t>(length), '\0');
    auto* out = reinterpret_cast<unsigned char*>(der.data());
    i2d_OCSP_REQUEST(request.get(), &out);
    return der;
}

std::string check_ocsp_response(const std::string& response, X509* leaf, X509* issuer,
                                STACK_OF(X509) * chain, OcspAnswer& answer) {
    tls::clear_openssl_errors();
    const auto* in = reinterpret_cast<const unsigned char*>(response.data());
    Response parsed(d2i_OCSP_RESPONSE(nullptr, &in, static_cast<long>(response.size())));
    if (!parsed) {
        tls::clear_openssl_errors();
        return "the responder's answer is not an OCSP response";
    }
    int status = OCSP_response_status(parsed.get());
    if (status != OCSP_RESPONSE_STATUS_SUCCESSFUL)
        return std::string("the responder answered \"") + OCSP_response_status_str(status) + "\"";
    Basic basic(OCSP_response_get1_basic(parsed.get()));
    if (!basic) return "the OCSP response has no basic response";
    // The issuer is the trust anchor: the response must be signed by it or
    // by a responder certificate it issued for OCSP signing (RFC 6960 4.2.2.2).
    Store store(X509_STORE_new());
    if (!store || X509_STORE_add_cert(store.get(), issuer) != 1) return "no memory for the check";
    X509_STORE_set_flags(store.get(), X509_V_FLAG_PARTIAL_CHAIN);
    if (OCSP_basic_verify(basic.get(), chain, store.get(), 0) != 1) {
        std::string why = tls::take_openssl_errors();
        return "the OCSP response's signature does not verify against the issuer (" + why + ")";
    }
    CertId id(OCSP_cert_to_id(nullptr, leaf, issuer));
    int certificate_status = -1, reason = -1;
    ASN1_GENERALIZEDTIME *revoked_at = nullptr, *this_update = nullptr, *next_update = nullptr;
    if (!id || OCSP_resp_find_status(basic.get(), id.get(), &certificate_status, &reason,
                                     &revoked_at, &this_update, &next_update) != 1)
        return "the OCSP response is not about this certificate";
    if (OCSP_check_validity(this_update, next_update, clock_leeway_seconds, -1) != 1) {
        tls::clear_openssl_errors();
        return "the OCSP response is not current (thisUpdate or nextUpdate out of range)";
    }
    if (certificate_status == V_OCSP_CERTSTATUS_UNKNOWN)
        return "the responder does not know this certificate (status unknown)";
    answer.status = certificate_status == V_OCSP_CERTSTATUS_GOOD ? "good" : "revoked";
    answer.this_update = unix_seconds(this_update);
    answer.next_update = unix_seconds(next_update);
    return {};
}

}  // namespace portico::acme
