#include "http/exchange.hpp"

#include "http/status.hpp"

namespace portico::http {

void Exchange::respond_text(int status, std::string_view body) {
    bool bodyless = is_bodyless_status(status);
    begin_response(status, bodyless ? 0 : body.size());
    if (bodyless) {
        end_response();
        return;
    }
    add_header("Content-Type", "text/plain; charset=utf-8");
    send_body_pieces({&body, 1}, true);  // with the end: one write for all
}

}  // namespace portico::http
