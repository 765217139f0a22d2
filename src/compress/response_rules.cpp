#include "compress/response_rules.hpp"

#include "http/header_text.hpp"

namespace portico::compress {

namespace {

// RFC 9110 6.4.1 and 15.3.7: no body, or a part of one whose offsets
// count the identity's bytes.
bool status_compressible(int status) {
    return status >= 200 && status != 204 && status != 206 && status != 304;
}

bool list_has_token(std::string_view list, std::string_view token) {
    bool found = false;
    http::for_each_list_member(list, [&](std::string_view member) {
        // A directive with an argument ("max-age=60") is named before '='.
        std::string_view name = http::trim_ows(member.substr(0, member.find('=')));
        if (http::equals_ignore_case(name, token)) found = true;
    });
    return found;
}

}  // namespace

bool type_listed(std::string_view content_type, const std::vector<std::string>& types) {
    std::string_view media_type = http::trim_ows(content_type.substr(0, content_type.find(';')));
    for (const std::string& type : types) {
        if (type.ends_with("/*")) {
            // "text/*": the type and its slash.
            size_t prefix = type.size() - 1;
            if (media_type.size() > prefix &&
                http::equals_ignore_case(media_type.substr(0, prefix), std::string_view(type).substr(0, prefix)))
                return true;
        } else if (http::equals_ignore_case(media_type, type)) {
            return true;
        }
    }
    return false;
}

bool forbids_transform(std::string_view cache_control) {
    return list_has_token(cache_control, "no-transform");
}

bool vary_covers_accept_encoding(std::string_view vary) {
    return list_has_token(vary, "accept-encoding") || list_has_token(vary, "*");
}

Treatment treatment_for(const ResponseFacts& response, const config::CompressConfig& config,
                        bool client_accepts_a_coding) {
    if (!status_compressible(response.status)) return Treatment::as_is;
    // Encoded already (an upstream's gzip, a precompressed sidecar): a
    // second coding would cost CPU for nothing.
    if (!response.content_encoding.empty()) return Treatment::as_is;
    if (forbids_transform(response.cache_control)) return Treatment::as_is;
    if (!type_listed(response.content_type, config.types)) return Treatment::as_is;
    if (response.length && *response.length < config.min_length) return Treatment::as_is;
    return client_accepts_a_coding ? Treatment::compress : Treatment::vary_only;
}

}  // namespace portico::compress
