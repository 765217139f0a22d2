// What a handler sees of one request and its response. The client connection
// implements it; a handler never touches the socket, so every handler gets
// keep-alive, HEAD, timeouts and back-pressure the same way.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string_view>

#include "config/config.hpp"
#include "http/request.hpp"

namespace portico::http {

class Exchange {
public:
    virtual const Request& request() const = 0;
    virtual const config::LocationConfig& location() const = 0;

    // A response is: begin_response, any add_header, any send_body/send_file,
    // end_response. `content_length` is the exact body length (also for HEAD,
    // whose body the exchange drops). The location's `headers` are added by
    // the exchange.
    virtual void begin_response(int status, uint64_t content_length) = 0;
    virtual void add_header(std::string_view name, std::string_view value) = 0;
    // The bytes must stay valid until the response ends.
    virtual void send_body(std::string_view bytes) = 0;
    // `owner` keeps the descriptor open until the response has been sent.
    virtual void send_file(int fd, off_t offset, uint64_t length,
                           std::shared_ptr<const void> owner) = 0;
    virtual void end_response() = 0;

    // A whole short response: the status and a plain-text body.
    virtual void respond_text(int status, std::string_view body) = 0;

protected:
    ~Exchange() = default;
};

// A handler answers a request (now, or later from the event loop) and
// returns true, or declines with false and the location's next handler is
// tried ("the file if it exists, else the upstream"); when all decline: 404.
class Handler {
public:
    virtual ~Handler() = default;
    virtual bool serve(Exchange& exchange) = 0;
};

}  // namespace portico::http
