#include "acme/staples.hpp"

#include <openssl/pem.h>

#include <algorithm>
#include <chrono>
#include <climits>

#include "acme/ocsp.hpp"
#include "acme/wall_clock.hpp"
#include "core/log.hpp"
#include "tls/openssl_error.hpp"

namespace portico::acme {

namespace {

constexpr int64_t min_refresh_ms = 10'000;
constexpr int64_t expiry_margin_ms = 300'000;
constexpr int64_t no_next_update_refresh_ms = 3'600'000;
constexpr int64_t first_retry_ms = 2'000;
constexpr int64_t max_retry_ms = 300'000;
// Each request to a responder; the workers never wait for it.
constexpr auto responder_request_timeout = std::chrono::seconds(5);

}  // namespace

// Named, not anonymous: Staples::Subject, a member of a named class, holds them.
struct FreeX509 {
    void operator()(X509* certificate) const { X509_free(certificate); }
};
struct FreeChain {
    void operator()(STACK_OF(X509) * chain) const { sk_X509_pop_free(chain, X509_free); }
};

int64_t StaplePolicy::refresh_due_ms(int64_t now_ms, int64_t this_update, int64_t next_update) {
    if (next_update == 0) return now_ms + no_next_update_refresh_ms;
    int64_t half = this_update * 1000 + (next_update - this_update) * 1000 / 2;
    int64_t before_expiry = next_update * 1000 - expiry_margin_ms;
    return std::max(std::min(half, before_expiry), now_ms + min_refresh_ms);
}

int64_t StaplePolicy::retry_ms(unsigned failures) {
    return std::min(first_retry_ms << std::min(failures - 1, 20u), max_retry_ms);
}

struct Staples::Subject {
    size_t slot = 0;
    std::string label;                 // the certificate's file, or the ACME site's first name
    std::optional<size_t> site;        // an ACME site's: its certificate comes from the board
    uint64_t certificate_version = 0;  // of the board's certificate last followed
    std::unique_ptr<X509, FreeX509> leaf;
    std::unique_ptr<STACK_OF(X509), FreeChain> chain;  // after the leaf
    X509* issuer = nullptr;                            // in chain
    std::string url;
    std::string request;  // DER, for this leaf
    Staple staple;
    int64_t due_ms = INT64_MAX;
    unsigned failures = 0;
};

Staples::Staples(const config::Config& config, const tls::ServerTls& tls, StapleBoard& board,
                 const Board* certificates)
    : board_(board),
      certificates_(certificates),
      responder_(config.tls ? config.tls->ocsp_responder : ""),
      http_("", responder_request_timeout) {
    for (const tls::ServerTls::FileCertificate& file : tls.file_certificates()) {
        auto subject = std::make_unique<Subject>();
        subject->slot = file.slot;
        subject->label = file.file;
        STACK_OF(X509)* chain = nullptr;
        SSL_CTX_get0_chain_certs(file.context, &chain);
        X509* leaf = SSL_CTX_get0_certificate(file.context);
        X509_up_ref(leaf);
        subject->leaf.reset(leaf);
        subject->chain.reset(chain ? X509_chain_up_ref(chain) : sk_X509_new_null());
        subjects_.push_back(std::move(subject));
    }
    for (size_t site = 0; certificates && site < config.sites.size(); ++site) {
        if (!config.sites[site].acme) continue;
        auto subject = std::make_unique<Subject>();
        subject->slot = tls.fed_slot(site);
        subject->label = config.sites[site].names.front().text;
        subject->site = site;
        subjects_.push_back(std::move(subject));
    }
    for (auto& subject : subjects_) {
        if (!subject->leaf) continue;  // an ACME site's, once it has one
        follow_certificate(*subject, {});
    }
}

Staples::~Staples() = default;

bool Staples::wanted(const config::Config& config, const tls::ServerTls& tls) {
    if (!config.tls || !config.tls->ocsp_stapling) return false;
    if (!config.tls->ocsp_responder.empty()) return true;
    if (config.acme && std::any_of(config.sites.begin(), config.sites.end(),
                                   [](const config::SiteConfig& site) { return site.acme; }))
        return true;
    for (const tls::ServerTls::FileCertificate& file : tls.file_certificates())
        if (!ocsp_responder_of(SSL_CTX_get0_certificate(file.context)).empty()) return true;
    return false;
}

// Takes the subject's certificate (for an ACME site, `chain` as the board
// holds it, leaf first) and makes it due at once, or says why it cannot be
// stapled.
void Staples::follow_certificate(Subject& subject, const std::string& chain) {
    if (subject.site) {
        std::unique_ptr<BIO, decltype(&BIO_free)> pem(
            BIO_new_mem_buf(chain.data(), static_cast<int>(chain.size())), BIO_free);
        subject.leaf.reset(pem ? PEM_read_bio_X509(pem.get(), nullptr, nullptr, nullptr) : nullptr);
        subject.chain.reset(sk_X509_new_null());
        while (X509* next = pem ? PEM_read_bio_X509(pem.get(), nullptr, nullptr, nullptr) : nullptr)
            sk_X509_push(subject.chain.get(), next);
        tls::clear_openssl_errors();  // the end of the PEM text
    }
    subject.staple = Staple{};
    subject.staple.certificate = tls::digest_of(subject.leaf.get());
    subject.failures = 0;
    subject.due_ms = INT64_MAX;
    subject.issuer = subject.leaf ? issuer_in(subject.leaf.get(), subject.chain.get()) : nullptr;
    subject.url =
        responder_.empty() && subject.leaf ? ocsp_responder_of(subject.leaf.get()) : responder_;
    std::string why;
    if (!subject.leaf)
        why = "the certificate does not load";
    else if (subject.url.empty())
        why = "the certificate names no OCSP responder";
    else if (!subject.issuer)
        why = "the chain lacks the certificate's issuer (put it after the leaf in the file)";
    else if ((subject.request = ocsp_request(subject.leaf.get(), subject.issuer)).empty())
        why = "cannot make the OCSP request";
    if (why.empty()) {
        subject.due_ms = wall_now_ms();
        return;
    }
    log::info("ocsp: {}: not stapled: {}", subject.label, why);
    subject.staple.last_error = why;
    publish(subject);
}

int64_t Staples::due_ms() const {
    int64_t due = INT64_MAX;
    for (const auto& subject : subjects_) {
        if (subject->site && certificates_->version(*subject->site) != subject->certificate_version)
            return wall_now_ms();
        due = std::min(due, subject->due_ms);
    }
    return due;
}

void Staples::run_due() {
    for (auto& subject : subjects_) {
        if (!subject->site) continue;
        std::string chain, key;
        uint64_t version = certificates_->version(*subject->site);
        if (version == subject->certificate_version) continue;
        bool has_one = certificates_->read(*subject->site, chain, key, version);
        subject->certificate_version = version;
        if (has_one) follow_certificate(*subject, chain);
    }
    for (auto& subject : subjects_)
        if (subject->due_ms <= wall_now_ms()) fetch(*subject);
}

void Staples::fetch(Subject& subject) {
    HttpResponse response;
    std::string error;
    if (!http_.request_http_or_https("POST", subject.url, subject.request,
                                     "application/ocsp-request", response, error))
        return failed(subject, "cannot fetch from " + subject.url + ": " + error);
    if (response.status != 200)
        return failed(subject, subject.url + " answered " + std::to_string(response.status));
    OcspAnswer answer;
    if (std::string why = check_ocsp_response(response.body, subject.leaf.get(), subject.issuer,
                                              subject.chain.get(), answer);
        !why.empty())
        return failed(subject, why + " (from " + subject.url + ")");
    Staple& staple = subject.staple;
    bool changed = staple.status != answer.status || !staple.last_error.empty();
    staple.response = std::move(response.body);
    staple.status = answer.status;
    staple.this_update = answer.this_update;
    staple.next_update = answer.next_update;
    staple.last_error.clear();
    subject.failures = 0;
    int64_t now = wall_now_ms();
    subject.due_ms = StaplePolicy::refresh_due_ms(now, answer.this_update, answer.next_update);
    publish(subject);
    log::log(changed ? log::Level::info : log::Level::debug,
             "ocsp: {}: stapling a \"{}\" response (next update {}), next fetch in {}",
             subject.label, answer.status,
             answer.next_update ? std::to_string(answer.next_update) : "none",
             seconds_text(subject.due_ms - now));
}

void Staples::failed(Subject& subject, const std::string& error) {
    ++subject.failures;
    int64_t delay = StaplePolicy::retry_ms(subject.failures);
    subject.due_ms = wall_now_ms() + delay;
    Staple& staple = subject.staple;
    bool still_valid = !staple.response.empty() &&
                       (staple.next_update == 0 || staple.next_update * 1000 > wall_now_ms());
    log::log(
        error == staple.last_error ? log::Level::debug : log::Level::error,
        "ocsp: {}: {}; {}, next attempt in {}", subject.label, error,
        still_valid ? "still stapling the last good response" : "handshakes go without a staple",
        seconds_text(delay));
    staple.last_error = error;
    publish(subject);
}

void Staples::publish(Subject& subject) {
    subject.staple.next_fetch = subject.due_ms == INT64_MAX ? 0 : subject.due_ms / 1000;
    board_.publish(subject.slot, subject.staple);
}

}  // namespace portico::acme
