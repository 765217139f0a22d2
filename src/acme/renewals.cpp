#include "acme/renewals.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <climits>

#include "acme/storage.hpp"
#include "acme/wall_clock.hpp"
#include "core/log.hpp"

namespace portico::acme {

namespace {

constexpr int64_t first_backoff_ms = 2'000;
constexpr int64_t max_backoff_ms = 3'600'000;
// Each request to the CA; a whole order also bounds its waits (protocol.cpp).
constexpr auto ca_request_timeout = std::chrono::seconds(15);

double random_fraction() {
    static std::mt19937_64 generator{std::random_device{}()};
    return std::uniform_real_distribution<double>(0.0, 1.0)(generator);
}

bool covers(const CertificateFacts& facts, const std::vector<std::string>& names) {
    return std::all_of(names.begin(), names.end(), [&](const std::string& name) {
        return std::find(facts.names.begin(), facts.names.end(), name) != facts.names.end();
    });
}

std::string joined(const std::vector<std::string>& names) {
    std::string text;
    for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
    return text;
}


}  // namespace

int64_t RenewalPolicy::renewal_due_ms(int64_t not_before, int64_t not_after, double jitter) {
    int64_t lifetime_ms = (not_after - not_before) * 1000;
    return not_before * 1000 + lifetime_ms * 2 / 3 +
           static_cast<int64_t>(jitter * static_cast<double>(lifetime_ms) / 30);
}

int64_t RenewalPolicy::backoff_ms(unsigned failures, int64_t retry_after_seconds) {
    int64_t backoff = first_backoff_ms << std::min(failures - 1, 20u);
    return std::max(std::min(backoff, max_backoff_ms), retry_after_seconds * 1000);
}

Renewals::Renewals(const config::Config& config, Board& board)
    : acme_(*config.acme), board_(board), http_(config.acme->ca_root, ca_request_timeout) {
    for (size_t index = 0; index < config.sites.size(); ++index) {
        const config::SiteConfig& site = config.sites[index];
        if (!site.acme) continue;
        Site& added = sites_.emplace_back();
        added.index = index;
        for (const config::SiteName& name : site.names) added.names.push_back(name.text);
        std::string base = acme_.storage + "/" + added.names.front();
        added.chain_path = base + ".crt";
        added.key_path = base + ".key";
        reuse_stored(added);
    }
    for (Site& site : sites_) publish_state(site);
}

void Renewals::reuse_stored(Site& site) {
    std::optional<std::string> chain = read_stored(site.chain_path);
    std::optional<std::string> key = read_stored(site.key_path);
    CertificateFacts facts;
    if (!chain || !key || !leaf_facts(*chain, facts) || !key_from_pem(*key)) {
        log::info("acme: no stored certificate for {}: ordering one", site.names.front());
        return;
    }
    if (!covers(facts, site.names) || facts.not_after * 1000 <= wall_now_ms()) {
        log::info("acme: the stored certificate of {} {}: ordering a new one", site.names.front(),
                  covers(facts, site.names) ? "has expired" : "lacks some of the site's names");
        return;
    }
    served(site, *chain, *key, facts);
    log::info("acme: reusing the stored certificate of {} (valid until {}), renewal in {}",
              site.names.front(), facts.not_after, seconds_text(site.due_ms - wall_now_ms()));
}

void Renewals::served(Site& site, const std::string& chain, const std::string& key,
                      const CertificateFacts& facts) {
    board_.publish_certificate(site.index, chain, key);
    site.not_after = facts.not_after;
    site.due_ms =
        RenewalPolicy::renewal_due_ms(facts.not_before, facts.not_after, random_fraction());
    publish_state(site);
}

void Renewals::publish_state(const Site& site) {
    board_.publish_state(site.index, {site.not_after, site.due_ms / 1000, site.last_error});
}

bool Renewals::ensure_account_key() {
    if (account_key_) return true;
    std::string path = acme_.storage + "/account.key";
    if (std::optional<std::string> stored = read_stored(path)) {
        account_key_ = key_from_pem(*stored);
        if (!account_key_) throw AcmeError(path + " is not a PEM private key: move it away");
    } else {
        account_key_ = new_key();
        std::string error;
        if (!account_key_ || !write_stored(path, key_pem(account_key_.get()), error)) {
            account_key_.reset();
            throw AcmeError(error.empty() ? "cannot make an account key" : error);
        }
        log::info("acme: new account key in {}", path);
    }
    ChallengeBoard challenges{
        [this](const std::string& token, const std::string& authorization) {
            return board_.publish_challenge(token, authorization);
        },
        [this](const std::string& token) { board_.withdraw_challenge(token); },
        [this](const std::string& name, const std::string& chain, const std::string& key) {
            return board_.publish_alpn_challenge(name, chain, key);
        },
        [this](const std::string& name) { board_.withdraw_alpn_challenge(name); }};
    session_ = std::make_unique<AcmeSession>(http_, account_key_.get(), acme_.directory,
                                             acme_.email, std::move(challenges));
    return true;
}

void Renewals::renew(Site& site) {
    try {
        ensure_account_key();
        KeyPtr key = new_key();
        if (!key) throw AcmeError("cannot make a certificate key");
        log::info("acme: ordering a certificate for {} ({})", joined(site.names),
                  challenge_name(site.challenge));
        std::string chain = session_->order_certificate(site.names, key.get(), site.challenge);
        CertificateFacts facts;
        if (!leaf_facts(chain, facts) || !covers(facts, site.names))
            throw AcmeError("the CA's certificate does not name every name of the site");
        std::string pem = key_pem(key.get()), error;
        // The key first: a chain beside an old key would not load.
        if (!write_stored(site.key_path, pem, error) ||
            !write_stored(site.chain_path, chain, error))
            throw AcmeError(error);
        site.failures = 0;
        site.last_error.clear();
        served(site, chain, pem, facts);
        log::info("acme: new certificate for {}, valid until {}, renewal in {}", site.names.front(),
                  facts.not_after, seconds_text(site.due_ms - wall_now_ms()));
    } catch (const AcmeError& error) {
        failed(site, error);
    } catch (const std::exception& error) {
        // A JSON member of an unexpected type (nlohmann's type_error), or no memory.
        failed(site,
               AcmeError(std::string("the CA's answer is not as RFC 8555 says: ") + error.what()));
    }
}

void Renewals::failed(Site& site, const AcmeError& error) {
    // The next session starts afresh: a new directory, nonce and account lookup.
    session_.reset();
    account_key_.reset();
    ++site.failures;
    if (error.validation_failed)
        site.challenge = site.challenge == ChallengeType::http01 ? ChallengeType::tls_alpn01
                                                                 : ChallengeType::http01;
    int64_t delay = RenewalPolicy::backoff_ms(site.failures, error.retry_after);
    site.due_ms = wall_now_ms() + delay;
    log::Level level = error.what() == site.last_error ? log::Level::debug : log::Level::error;
    log::log(level, "acme: {}: {}; {}, next attempt in {}", site.names.front(), error.what(),
             site.not_after ? "still serving the last good certificate"
                            : "serving [tls]'s default certificate meanwhile",
             seconds_text(delay));
    site.last_error = error.what();
    publish_state(site);
}

int64_t Renewals::due_ms() const {
    auto next = std::min_element(sites_.begin(), sites_.end(),
                                 [](const Site& a, const Site& b) { return a.due_ms < b.due_ms; });
    return next == sites_.end() ? INT64_MAX : next->due_ms;
}

void Renewals::run_due() {
    for (Site& site : sites_)
        if (site.due_ms <= wall_now_ms()) renew(site);
}

}  // namespace portico::acme
