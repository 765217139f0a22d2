// A config value in which $variables expand per request (nginx's "complex
// values"): compiled once when the file is read, into literal text and
// variable references, so a request never parses a template. What each
// variable reads is the request path's business (http/template_expand.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace portico::config {

enum class Variable : uint8_t {
    text,         // literal text (TemplatePart::text)
    host,         // the Host, lowercase, without port or trailing dot
    server_name,  // the first of the selected site's names
    server_port,  // the port of the listener the request came in on
    scheme,       // "http" or "https"
    request_uri,  // the raw target as received (path and query)
    uri,          // the normalized path, after a rewrite
    args,         // the query without '?'
    remote_addr,  // the client address (the real one behind a trusted proxy)
    request_id,   // 32 lowercase hex characters, one per request
    http,         // a request header: TemplatePart::text is its name, lowercase, '-' for '_'
    cookie,       // one cookie's value: TemplatePart::text is its name
    capture,      // a regex capture: TemplatePart::capture is its group number
};

struct TemplatePart {
    Variable variable = Variable::text;
    std::string text;
    int capture = -1;
};

struct Template {
    std::string source;  // as written, for messages and docs
    std::vector<TemplatePart> parts;

    // No variable at all: the value is `source`, as written.
    bool is_literal() const {
        return parts.empty() || (parts.size() == 1 && parts[0].variable == Variable::text);
    }
    bool uses(Variable variable) const;
};

// The groups of the regex a template's captures refer to ($1, $name): its
// number of groups and the named ones. Empty: no capture may be used.
struct CaptureScope {
    int groups = 0;
    std::vector<std::pair<std::string, int>> names;
};

struct TemplateError {
    size_t offset = 0;  // into the text, where the bad variable starts
    std::string message;
};

// "$name", "${name}", "$1".."$9", "$http_x_api_key", "$cookie_session".
// A '$' that does not start a known variable is an error (nginx refuses
// such a value too); "$$" is not an escape.
bool compile_template(std::string_view text, const CaptureScope& scope, Template& out,
                      TemplateError& error);

}  // namespace portico::config
