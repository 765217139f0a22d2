// One parsed request head. Every view points into the connection's read
// buffer, which is not moved or reused until the request is finished, so the
// head is parsed without copying a byte.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/header_text.hpp"

namespace portico::http {

struct HeaderField {
    std::string_view name;
    std::string_view value;
};

// Something a request holds until it ends, however it ends (a
// max_concurrent slot, access/concurrency_limit.hpp): given back once, when
// the request is recorded (http/request_record.hpp), or at the latest when
// its Request is reset.
struct HeldUntilEnd {
    void (*give_back)(void* owner, uint64_t token) = nullptr;
    void* owner = nullptr;
    uint64_t token = 0;
};

// The plain fields of a request, reset in one assignment between requests.
struct RequestFields {
    uint8_t method = 0;  // llhttp_method_t
    std::string_view method_name;
    uint8_t version_major = 1;  // 2: an HTTP/2 stream
    uint8_t version_minor = 1;  // HTTP/1.x; the parser refuses other majors
    std::string_view target;    // as sent: origin form or absolute form
    std::string_view path;      // the path of the target, still percent-encoded
    std::string_view query;     // after '?', without it; empty when absent
    std::string_view authority; // host of an absolute-form target, else empty

    // Derived while parsing, so handlers need not search the header list.
    std::string_view host;  // the Host header, or the absolute-form authority
    bool expect_continue = false;
    bool chunked = false;
    bool has_content_length = false;
    uint64_t content_length = 0;
    bool wants_keep_alive = true;  // llhttp's verdict from version + Connection
    bool upgrade = false;          // Connection: upgrade with an Upgrade header

    // Filled by the connection before routing.
    bool path_had_encoded_slash = false;  // a %2F became a '/' in normalized_path
    bool secure = false;                  // it arrived over TLS
    uint16_t server_port = 0;             // the port of the listener it came in on
    uint16_t listener = 0;                // which (config::listeners_of's index)
    std::string_view tls_server_name;     // its TLS connection's SNI; empty: none
    // Set by the routing: the selected site's first name ($server_name).
    std::string_view server_name;
    // A rewrite or internal redirect changed normalized_path (and maybe the
    // query): the proxy then sends those, not the target as received.
    bool uri_changed = false;
    // try_files found none of its files and ends with "@UPSTREAM": the
    // location's static files are skipped and that upstream answers.
    bool skip_static_files = false;
    // $request_id, made on first use (request_id()); empty until then.
    // Mutable: making it is not a change of the request, and a handler sees
    // the request const.
    mutable std::string_view request_id;
    // Mutable as request_id: taking a slot is not a change of the request.
    mutable HeldUntilEnd held;
    // The limits have counted this request: an error page that reroutes it
    // is not counted again (nginx counts the main request once).
    mutable bool limits_counted = false;
    // The response cache fills an entry with this request: the upstream is
    // asked for the whole object (GET, without Range or conditions), and the
    // client still gets what it asked for (its head for HEAD). Beside the
    // other flag, not last: a size that is a multiple of 8 lets reset() clear
    // the fields in place instead of copying a cleared temporary.
    mutable bool upstream_whole_object = false;
    // The limit or access rule that refused the request, for the access log.
    mutable std::string_view refused_by;
    // What the response cache did ("HIT", "MISS", ...), for the access log;
    // empty: no cache.
    mutable std::string_view cache_result;
};
static_assert(sizeof(RequestFields) % 8 == 0, "see upstream_whole_object");

// The text request_id views: left out of the reset (it is written before
// it is viewed).
struct RequestIdText {
    RequestIdText() {}  // user-provided: a value-initialized Request leaves it alone
    char text[32];
};

struct Request : RequestFields {
    // The buffers, reused across requests (reset() keeps their capacity).
    std::vector<HeaderField> headers;
    std::string normalized_path;
    std::string rewritten_query;  // what `query` views after a rewrite that set arguments
    mutable RequestIdText request_id_text;

    bool has_body() const { return chunked || content_length > 0; }
    bool is_head() const;
    // The first header with this name (case-insensitive), or an empty view.
    std::string_view header(std::string_view name) const;
    // Clears the views for the next request, keeping allocated capacity.
    void reset();
    void give_back_held() const {
        if (held.give_back != nullptr)
            std::exchange(held.give_back, nullptr)(held.owner, held.token);
    }
};

// The request's $request_id: 32 lowercase hex characters, random, made the
// first time it is asked for (an X-Request-ID from a trusted proxy is set
// in request_id before).
std::string_view request_id(const Request& request);

// A Host header (or :authority, or an absolute-form target's authority) as
// RFC 9110 7.2 and RFC 3986 3.2.2 allow it: a reg-name, an IPv4 address or
// a bracketed IPv6 literal, then an optional ":port". Empty is valid (a
// target without an authority). A value that is not a host ("a b",
// "evil.test/x?y", "../../etc") would reach the upstream as Host and
// X-Forwarded-Host and a redirect's Location: the codecs answer 400, as
// nginx does ("invalid host header"), which also refuses "..".
bool is_valid_host(std::string_view host);

}  // namespace portico::http
