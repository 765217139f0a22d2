#include "acme/stats_json.hpp"

#include <ctime>

#include <nlohmann/json.hpp>

namespace portico::acme {

std::string stats_json(const config::Config& config, const Board& board) {
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
        certificates.push_back(std::move(entry));
    }
    return "\"acme\":" + nlohmann::json{{"certificates", certificates}}.dump();
}

}  // namespace portico::acme
