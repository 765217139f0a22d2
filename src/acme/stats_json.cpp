#include "acme/stats_json.hpp"

#include <ctime>

#include <nlohmann/json.hpp>

namespace portico::acme {

namespace {

void add_staple(nlohmann::json& entry, const StapleBoard* staples, size_t slot) {
    if (!staples || slot >= staples->slots()) return;
    Staple staple = staples->state(slot);
    entry["ocsp_status"] = staple.status;
    entry["ocsp_this_update"] = staple.this_update;
    entry["ocsp_next_update"] = staple.next_update;
    entry["ocsp_next_fetch"] = staple.next_fetch;
    entry["ocsp_last_error"] = staple.last_error;
}

std::string acme_json(const config::Config& config, const Board& board, const StapleBoard* staples,
                      const tls::ServerTls* tls) {
    nlohmann::json certificates = nlohmann::json::array();
    int64_t now = std::time(nullptr);
    for (size_t site = 0; site < config.sites.size() && site < board.sites(); ++site) {
        if (!config.sites[site].acme) continue;
        SiteState state = board.state(site);
        nlohmann::json names = nlohmann::json::array();
        for (const config::SiteName& name : config.sites[site].names) names.push_back(name.text);
        nlohmann::json entry = {{"names", names},
                                {"not_after", state.not_after},
                                {"expires_in_seconds", state.not_after ? state.not_after - now : 0},
                                {"next_attempt", state.next_attempt},
                                {"last_error", state.last_error}};
        if (tls) add_staple(entry, staples, tls->fed_slot(site));
        certificates.push_back(std::move(entry));
    }
    return "\"acme\":" + nlohmann::json{{"certificates", certificates}}.dump();
}

std::string ocsp_json(const StapleBoard& staples, const tls::ServerTls& tls) {
    nlohmann::json certificates = nlohmann::json::array();
    for (const tls::ServerTls::FileCertificate& file : tls.file_certificates()) {
        nlohmann::json entry = {{"file", file.file}, {"names", file.names}};
        add_staple(entry, &staples, file.slot);
        certificates.push_back(std::move(entry));
    }
    return "\"ocsp\":" + nlohmann::json{{"certificates", certificates}}.dump();
}

}  // namespace

std::string stats_json(const config::Config& config, const Board* board, const StapleBoard* staples,
                       const tls::ServerTls* tls) {
    std::string members = board ? acme_json(config, *board, staples, tls) : "";
    if (staples && tls) members += (members.empty() ? "" : ",") + ocsp_json(*staples, *tls);
    return members;
}

}  // namespace portico::acme
