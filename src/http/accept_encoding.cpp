#include "http/accept_encoding.hpp"

#include <algorithm>
#include <array>

#include "http/header_text.hpp"

namespace portico::http {

namespace {

constexpr int not_listed = -1;
constexpr int full_weight = 1000;  // q=1, in thousandths

// qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ) (RFC 9110
// 12.4.2), in thousandths; not_listed when malformed.
int parse_qvalue(std::string_view text) {
    if (text.empty() || (text[0] != '0' && text[0] != '1')) return not_listed;
    int whole = text[0] - '0';
    if (text.size() == 1) return whole * full_weight;
    if (text[1] != '.' || text.size() > 5) return not_listed;
    int fraction = 0;
    int scale = 100;
    for (char digit : text.substr(2)) {
        if (digit < '0' || digit > '9') return not_listed;
        fraction += (digit - '0') * scale;
        scale /= 10;
    }
    if (whole == 1 && fraction != 0) return not_listed;
    return whole * full_weight + fraction;
}

// The weight of one member's parameters (";q=0.5"): full without a q.
int member_weight(std::string_view parameters) {
    while (!parameters.empty()) {
        size_t semicolon = parameters.find(';');
        std::string_view parameter = http::trim_ows(parameters.substr(0, semicolon));
        size_t equals = parameter.find('=');
        if (equals != std::string_view::npos &&
            http::equals_ignore_case(http::trim_ows(parameter.substr(0, equals)), "q"))
            return parse_qvalue(http::trim_ows(parameter.substr(equals + 1)));
        if (semicolon == std::string_view::npos) break;
        parameters.remove_prefix(semicolon + 1);
    }
    return full_weight;
}

std::optional<config::Coding> coding_named(std::string_view name) {
    for (config::Coding coding : config::codings_by_preference)
        if (http::equals_ignore_case(name, config::coding_name(coding))) return coding;
    // RFC 9110 8.4.1.3: a recipient SHOULD consider "x-gzip" to be gzip.
    if (http::equals_ignore_case(name, "x-gzip")) return config::Coding::gzip;
    return std::nullopt;
}

}  // namespace

std::optional<config::Coding> negotiate_coding(std::string_view accept_encoding,
                                               config::CodingSet offered) {
    if (accept_encoding.empty() || offered.empty()) return std::nullopt;
    std::array<int, config::codings_by_preference.size()> weights;
    weights.fill(not_listed);
    int wildcard = not_listed;
    int identity = not_listed;
    http::for_each_list_member(accept_encoding, [&](std::string_view member) {
        size_t semicolon = member.find(';');
        std::string_view name = http::trim_ows(member.substr(0, semicolon));
        int weight = semicolon == std::string_view::npos
                         ? full_weight
                         : member_weight(member.substr(semicolon + 1));
        if (weight == not_listed) return;
        // A coding listed twice ("gzip, x-gzip;q=0"): the kinder entry.
        auto keep = [weight](int& slot) { slot = std::max(slot, weight); };
        if (std::optional<config::Coding> coding = coding_named(name))
            keep(weights[static_cast<size_t>(*coding)]);
        else if (name == "*")
            keep(wildcard);
        else if (http::equals_ignore_case(name, "identity"))
            keep(identity);
    });
    std::optional<config::Coding> best;
    int best_weight = 0;
    for (config::Coding coding : config::codings_by_preference) {
        if (!offered.contains(coding)) continue;
        int listed = weights[static_cast<size_t>(coding)];
        int weight = listed != not_listed ? listed : wildcard != not_listed ? wildcard : 0;
        if (weight > best_weight) {  // strictly: a tie keeps the preferred one
            best = coding;
            best_weight = weight;
        }
    }
    // "*" names identity too when identity is not listed itself.
    int identity_weight = identity != not_listed ? identity : wildcard;
    if (best && identity_weight > best_weight) return std::nullopt;
    return best;
}

CompressibleRequest compressible_request(const Request& request) {
    if (request.is_head() || request.upgrade) return {};
    std::string_view accept_encoding;
    for (const HeaderField& field : request.headers) {
        if (equals_ignore_case(field.name, "range")) return {};
        if (accept_encoding.empty() && equals_ignore_case(field.name, "accept-encoding"))
            accept_encoding = field.value;
    }
    return {true, accept_encoding};
}

}  // namespace portico::http
