#include "http/https_redirect.hpp"

#include "http/redirect_response.hpp"

namespace portico::http {

namespace {

// "example.com:8080" -> "example.com", "[::1]:8080" -> "[::1]".
std::string_view without_port(std::string_view host) {
    size_t colon = host.rfind(':');
    if (colon == std::string_view::npos) return host;
    size_t bracket = host.rfind(']');
    if (bracket != std::string_view::npos && bracket > colon) return host;  // "[::1]"
    return host.substr(0, colon);
}

}  // namespace

std::string https_location(const Request& request, uint16_t port) {
    std::string_view host = without_port(request.host);
    if (host.empty()) return {};
    std::string location = "https://";
    location.append(host);
    if (port != 443) {
        location += ':';
        location += std::to_string(port);
    }
    location.append(request.path.empty() ? std::string_view("/") : request.path);
    if (!request.query.empty()) {
        location += '?';
        location.append(request.query);
    }
    return location;
}

bool is_acme_challenge(std::string_view normalized_path) {
    return normalized_path.starts_with("/.well-known/acme-challenge/");
}

StepResult HttpsRedirect::answer(Request& request, Exchange& client) {
    if (request.secure || is_acme_challenge(request.normalized_path)) return StepResult::next;
    std::string target = https_location(request, https_port_);
    if (target.empty()) {
        client.respond_text(400, "A Host header is needed to redirect to https.\n");
        return StepResult::answered;
    }
    // 301 may turn a POST into a GET; 308 keeps the method and body.
    int status = request.method_name == "GET" || request.is_head() ? 301 : 308;
    answer_redirect(client, status, target, "Moved to https.\n");
    return StepResult::answered;
}

}  // namespace portico::http
