#include "http/forwarded_client.hpp"

#include <arpa/inet.h>

#include <cstring>

#include "config/address_range.hpp"
#include "http/header_text.hpp"

namespace portico::http {

namespace {

constexpr size_t max_request_id_length = 128;

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
}

bool is_trusted(std::span<const config::AddressRange> trusted, const PeerAddress& address) {
    return config::any_range_contains(trusted, address.any);
}

}  // namespace

bool parse_forwarded_address(std::string_view entry, PeerAddress& out) {
    entry = trim(entry);
    if (entry.starts_with('[')) {
        size_t close = entry.find(']');
        if (close == std::string_view::npos) return false;
        std::string_view rest = entry.substr(close + 1);
        if (!rest.empty() && !rest.starts_with(':')) return false;
        entry = entry.substr(1, close - 1);
    } else if (size_t colon = entry.find(':');
               colon != std::string_view::npos &&
               entry.find(':', colon + 1) == std::string_view::npos) {
        entry = entry.substr(0, colon);  // IPv4 with a port (one colon; IPv6 has several)
    }
    char text[INET6_ADDRSTRLEN];
    if (entry.empty() || entry.size() >= sizeof text) return false;
    std::memcpy(text, entry.data(), entry.size());
    text[entry.size()] = '\0';
    PeerAddress address{};
    if (inet_pton(AF_INET, text, &address.v4.sin_addr) == 1) {
        address.v4.sin_family = AF_INET;
    } else if (inet_pton(AF_INET6, text, &address.v6.sin6_addr) == 1) {
        address.v6.sin6_family = AF_INET6;
    } else {
        return false;
    }
    out = address;
    return true;
}

PeerAddress forwarded_client(const Request& request, std::span<const config::AddressRange> trusted,
                             const PeerAddress& peer) {
    PeerAddress client = peer;
    for (auto field = request.headers.rbegin(); field != request.headers.rend(); ++field) {
        if (!equals_ignore_case(field->name, "x-forwarded-for")) continue;
        std::string_view list = field->value;
        while (true) {
            if (!is_trusted(trusted, client)) return client;
            size_t comma = list.rfind(',');
            std::string_view entry =
                comma == std::string_view::npos ? list : list.substr(comma + 1);
            if (!trim(entry).empty() && !parse_forwarded_address(entry, client)) return client;
            if (comma == std::string_view::npos) break;
            list = list.substr(0, comma);
        }
    }
    return client;
}

bool is_acceptable_request_id(std::string_view id) {
    if (id.empty() || id.size() > max_request_id_length) return false;
    for (char c : id)
        if (c < 0x21 || c > 0x7e) return false;
    return true;
}

StepResult ForwardedClient::answer(Request& request, Exchange& client) {
    const PeerAddress& peer = client.client_address();
    if (!is_trusted(trusted_, peer)) return StepResult::next;
    if (std::string_view id = request.header("x-request-id"); is_acceptable_request_id(id))
        request.request_id = id;
    client.set_client_address(forwarded_client(request, trusted_, peer));
    return StepResult::next;
}

}  // namespace portico::http
