// redirect_http: where a request on a cleartext listener is sent instead.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "http/request.hpp"
#include "http/request_step.hpp"

namespace portico::http {

// https://HOST[:PORT]/path?query: the request's host without its port, the
// TLS port unless it is 443, and the path and query as the client sent
// them. Empty when the request names no host (an HTTP/1.0 request without
// Host), which cannot be redirected.
std::string https_location(const Request& request, uint16_t port);

// ACME HTTP-01 challenges must be answered over http (RFC 8555 8.3), so a
// certificate can be issued before https works.
bool is_acme_challenge(std::string_view normalized_path);

// The step: a request on a cleartext listener is sent to https (301 for
// GET and HEAD, 308 keeping the method and body for the others), except
// an ACME challenge.
class HttpsRedirect final : public RequestStep {
public:
    explicit HttpsRedirect(uint16_t https_port) : https_port_(https_port) {}
    StepResult answer(Request& request, Exchange& client) override;

private:
    uint16_t https_port_;
};

}  // namespace portico::http
