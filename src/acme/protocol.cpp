#include "acme/protocol.hpp"

#include <charconv>
#include <ctime>
#include <thread>

#include "acme/crypto.hpp"

namespace portico::acme {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// How long a validation or the issuance may take before the order is given
// up (and retried later with back-off).
constexpr auto max_wait = std::chrono::seconds(90);

// An error document (RFC 7807) in words: "TYPE: detail".
std::string problem_text(const HttpResponse& response) {
    json problem = json::parse(response.body, nullptr, false);
    std::string text = "HTTP " + std::to_string(response.status);
    if (problem.is_object()) {
        std::string type = problem.value("type", "");
        constexpr std::string_view prefix = "urn:ietf:params:acme:error:";
        if (type.starts_with(prefix)) type.erase(0, prefix.size());
        if (!type.empty()) text += " " + type;
        if (problem.contains("detail") && problem["detail"].is_string())
            text += ": " + problem["detail"].get<std::string>();
    }
    return text;
}

std::string string_member(const json& object, const char* name, std::string_view what) {
    if (!object.is_object() || !object.contains(name) || !object[name].is_string())
        throw AcmeError(std::string(what) + " has no \"" + name + "\"");
    return object[name].get<std::string>();
}

}  // namespace

const char* challenge_name(ChallengeType type) {
    return type == ChallengeType::http01 ? "http-01" : "tls-alpn-01";
}

int64_t retry_after_seconds(const std::string& value) {
    if (value.empty()) return 0;
    int64_t seconds = 0;
    auto [end, status] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (status == std::errc() && end == value.data() + value.size())
        return std::max<int64_t>(0, seconds);
    struct tm parts {};
    if (!strptime(value.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &parts)) return 0;
    return std::max<int64_t>(0, static_cast<int64_t>(timegm(&parts)) - std::time(nullptr));
}

AcmeSession::AcmeSession(HttpsClient& http, EVP_PKEY* account_key, std::string directory_url,
                         std::string email, ChallengeBoard challenges)
    : http_(http),
      account_key_(account_key),
      directory_url_(std::move(directory_url)),
      email_(std::move(email)),
      challenges_(std::move(challenges)),
      thumbprint_(jwk_thumbprint(account_key)) {}

HttpResponse AcmeSession::send(std::string_view method, const std::string& url) {
    HttpResponse response;
    std::string error;
    if (!http_.request(method, url, "", "", response, error)) throw AcmeError(error);
    if (std::string nonce = response.header("replay-nonce"); !nonce.empty()) nonce_ = nonce;
    return response;
}

void AcmeSession::ensure_directory_and_account() {
    if (directory_.is_null()) {
        HttpResponse response = send("GET", directory_url_);
        if (response.status != 200)
            throw AcmeError("directory " + directory_url_ + ": " + problem_text(response),
                            retry_after_seconds(response.header("retry-after")));
        json directory = json::parse(response.body, nullptr, false);
        for (const char* member : {"newNonce", "newAccount", "newOrder"})
            string_member(directory, member, "the directory " + directory_url_);
        directory_ = std::move(directory);
    }
    if (!account_url_.empty()) return;
    json account = {{"termsOfServiceAgreed", true}};
    if (!email_.empty()) account["contact"] = json::array({"mailto:" + email_});
    HttpResponse response = post(directory_["newAccount"].get<std::string>(), account.dump());
    if (response.status != 200 && response.status != 201)
        throw AcmeError("new account: " + problem_text(response),
                        retry_after_seconds(response.header("retry-after")));
    account_url_ = response.header("location");
    if (account_url_.empty()) throw AcmeError("new account: no Location in the answer");
}

std::string AcmeSession::fresh_nonce() {
    if (!nonce_.empty()) return std::exchange(nonce_, {});
    HttpResponse response = send("HEAD", directory_["newNonce"].get<std::string>());
    if (nonce_.empty()) throw AcmeError("new nonce: " + problem_text(response));
    return std::exchange(nonce_, {});
}

HttpResponse AcmeSession::post(const std::string& url, const std::string& payload) {
    constexpr int bad_nonce_retries =
        5;  // a CA may refuse a good nonce now and then (RFC 8555 6.5)
    for (int attempt = 0;; ++attempt) {
        json protected_header = {{"alg", "ES256"}, {"nonce", fresh_nonce()}, {"url", url}};
        if (account_url_.empty())
            protected_header["jwk"] = json::parse(jwk_json(account_key_));
        else
            protected_header["kid"] = account_url_;
        std::string head = base64url(protected_header.dump());
        std::string body = base64url(payload);
        std::string signature = es256_signature(account_key_, head + "." + body);
        if (signature.empty()) throw AcmeError("cannot sign with the account key");
        json jws = {{"protected", head}, {"payload", body}, {"signature", signature}};
        HttpResponse response;
        std::string error;
        if (!http_.request("POST", url, jws.dump(), "application/jose+json", response, error))
            throw AcmeError(error);
        nonce_ = response.header("replay-nonce");
        bool bad_nonce =
            response.status == 400 &&
            response.body.find("urn:ietf:params:acme:error:badNonce") != std::string::npos;
        if (!bad_nonce || attempt == bad_nonce_retries) return response;
    }
}

json AcmeSession::post_json(const std::string& url, const std::string& payload) {
    HttpResponse response = post(url, payload);
    if (response.status >= 300)
        throw AcmeError(url + ": " + problem_text(response),
                        retry_after_seconds(response.header("retry-after")));
    json parsed = json::parse(response.body, nullptr, false);
    if (!parsed.is_object()) throw AcmeError(url + ": the answer is not a JSON object");
    return parsed;
}

json AcmeSession::poll(const std::string& url, std::initializer_list<std::string_view> pending,
                       std::string_view what) {
    Clock::time_point give_up = Clock::now() + max_wait;
    auto pause = std::chrono::milliseconds(100);
    for (;;) {
        json object = post_json(url, "");
        std::string status = string_member(object, "status", what);
        if (std::find(pending.begin(), pending.end(), status) == pending.end()) return object;
        if (Clock::now() + pause > give_up)
            throw AcmeError(std::string(what) + " still " + status + " after " +
                            std::to_string(max_wait.count()) + " s");
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::milliseconds(2000));
    }
}

void AcmeSession::authorize(const std::string& authorization_url, ChallengeType type) {
    json authorization = post_json(authorization_url, "");
    std::string status = string_member(authorization, "status", "an authorization");
    if (status == "valid") return;
    std::string name = authorization.contains("identifier")
                           ? authorization["identifier"].value("value", std::string("?"))
                           : std::string("?");
    if (status != "pending") throw AcmeError("the authorization of " + name + " is " + status);
    const json* offered = nullptr;
    if (authorization.contains("challenges") && authorization["challenges"].is_array())
        for (const json& challenge : authorization["challenges"])
            if (challenge.is_object() && challenge.value("type", "") == challenge_name(type))
                offered = &challenge;
    if (!offered)
        throw AcmeError(
            std::string("the CA offers no ") + challenge_name(type) + " challenge for " + name, 0,
            true);
    std::string token = string_member(*offered, "token", "the challenge");
    std::string challenge_url = string_member(*offered, "url", "the challenge");
    std::string key_authorization = token + "." + thumbprint_;
    // Published until the CA is done with it, whatever happens.
    std::function<void()> withdraw;
    if (type == ChallengeType::http01) {
        if (!challenges_.publish(token, key_authorization))
            throw AcmeError("no room to publish the challenge for " + name);
        withdraw = [&] { challenges_.withdraw(token); };
    } else {
        PemPair certificate = tls_alpn_certificate(name, key_authorization);
        if (certificate.chain.empty() ||
            !challenges_.publish_alpn(name, certificate.chain, certificate.key))
            throw AcmeError("cannot publish the tls-alpn-01 certificate for " + name);
        withdraw = [&] { challenges_.withdraw_alpn(name); };
    }
    struct Withdraw {
        std::function<void()>& withdraw;
        ~Withdraw() { withdraw(); }
    } withdrawn_at_the_end{withdraw};
    post_json(challenge_url, "{}");
    json done = poll(authorization_url, {"pending"}, "the authorization of " + name);
    if (done.value("status", "") == "valid") return;
    std::string why = "the authorization of " + name + " by " + challenge_name(type) + " is " +
                      done.value("status", "?");
    if (done.contains("challenges"))
        for (const json& challenge : done["challenges"])
            if (challenge.is_object() && challenge.contains("error") &&
                challenge["error"].is_object())
                why += ": " + challenge["error"].value("detail", std::string());
    throw AcmeError(why, 0, true);
}

std::string AcmeSession::order_certificate(const std::vector<std::string>& names,
                                           EVP_PKEY* certificate_key, ChallengeType challenge) {
    ensure_directory_and_account();
    json identifiers = json::array();
    for (const std::string& name : names) identifiers.push_back({{"type", "dns"}, {"value", name}});
    HttpResponse created =
        post(directory_["newOrder"].get<std::string>(), json{{"identifiers", identifiers}}.dump());
    if (created.status != 201 && created.status != 200)
        throw AcmeError("new order: " + problem_text(created),
                        retry_after_seconds(created.header("retry-after")));
    std::string order_url = created.header("location");
    json order = json::parse(created.body, nullptr, false);
    if (order_url.empty() || !order.is_object())
        throw AcmeError("new order: no Location or no JSON order in the answer");
    if (!order.contains("authorizations") || !order["authorizations"].is_array())
        throw AcmeError("new order: no authorizations");
    for (const json& authorization : order["authorizations"])
        if (authorization.is_string()) authorize(authorization.get<std::string>(), challenge);
    std::string csr = csr_base64url(certificate_key, names);
    if (csr.empty()) throw AcmeError("cannot make the certificate request (CSR)");
    post_json(string_member(order, "finalize", "the order"), json{{"csr", csr}}.dump());
    json issued = poll(order_url, {"pending", "ready", "processing"}, "the order");
    if (issued.value("status", "") != "valid")
        throw AcmeError("the order is " + issued.value("status", std::string("?")));
    HttpResponse chain = post(string_member(issued, "certificate", "the valid order"), "");
    if (chain.status != 200 || chain.body.find("-----BEGIN CERTIFICATE-----") == std::string::npos)
        throw AcmeError("certificate download: " + problem_text(chain));
    return chain.body;
}

}  // namespace portico::acme
