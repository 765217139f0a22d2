#include "http/redirect_response.hpp"

namespace portico::http {

void answer_redirect(Exchange& client, int status, std::string_view location,
                     std::string_view body) {
    client.begin_response(status, body.size());
    client.add_header("Location", location);
    client.add_header("Content-Type", "text/plain; charset=utf-8");
    client.send_body(body);
    client.end_response();
}

}  // namespace portico::http
