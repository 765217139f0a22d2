// llhttp, built strict (LLHTTP_STRICT_MODE, no lenient flag ever set), wrapped so the connection
// drives it in steps: it pauses after the head (so the handler starts outside
// any parser callback, and can then stream the body) and after each message
// (so pipelined requests are answered one at a time, in order).
#pragma once

#include <llhttp.h>

#include <cstddef>
#include <string_view>

#include "http/request.hpp"

namespace portico::http1 {

class RequestParser {
public:
    // Where body data goes: llhttp's on_body, a chunked body already decoded
    // (chunk-size lines, extensions and trailers are llhttp's to check and
    // drop). Return false to pause the parser after this piece
    // (back-pressure): parse() then returns Step::body_paused and the caller
    // resumes later.
    class BodyReceiver {
    public:
        virtual bool on_request_body(std::string_view chunk) = 0;

    protected:
        ~BodyReceiver() = default;
    };

    RequestParser();
    // Starts over for a new connection's (or a new) request, delivering
    // bodies to `receiver`. Keeps the request's allocated capacity.
    void restart(BodyReceiver& receiver);
    RequestParser(const RequestParser&) = delete;
    RequestParser& operator=(const RequestParser&) = delete;

    enum class Step {
        need_more_data,    // everything given was consumed
        head_complete,     // request() is ready to be routed; resume() to read the body
        body_paused,       // the receiver asked for a pause; resume() when it drains
        message_complete,  // the whole request is in; resume() for the next one
        failed,            // error_status() says what to answer; the connection must close
    };
    struct Outcome {
        Step step;
        size_t consumed;  // bytes of `size` used up to this step
    };
    Outcome parse(const char* data, size_t size);
    void resume();

    // Nothing of the next request has arrived yet.
    bool between_requests() const { return !in_message_; }
    // The request line is still arriving (for 414 versus 431).
    bool in_request_line() const { return in_message_ && !url_complete_; }
    bool in_head() const { return in_message_ && !head_complete_; }

    int error_status() const { return error_status_; }
    const char* error_reason() const { return error_reason_; }
    http::Request& request() { return request_; }
    const http::Request& request() const { return request_; }

private:
    static const llhttp_settings_t settings;
    static RequestParser& from(llhttp_t* parser);
    static int on_message_begin(llhttp_t* parser);
    static int on_method(llhttp_t* parser, const char* at, size_t length);
    static int on_url(llhttp_t* parser, const char* at, size_t length);
    static int on_url_complete(llhttp_t* parser);
    static int on_header_field(llhttp_t* parser, const char* at, size_t length);
    static int on_header_field_complete(llhttp_t* parser);
    static int on_header_value(llhttp_t* parser, const char* at, size_t length);
    static int on_header_value_complete(llhttp_t* parser);
    static int on_headers_complete(llhttp_t* parser);
    static int on_body(llhttp_t* parser, const char* at, size_t length);
    static int on_message_complete(llhttp_t* parser);

    int fail(int status, const char* reason);
    int interpret_header(const http::HeaderField& field);
    bool split_target();

    llhttp_t parser_;
    BodyReceiver* receiver_ = nullptr;
    http::Request request_;
    http::HeaderField current_{};
    bool in_message_ = false;
    bool url_complete_ = false;
    bool head_complete_ = false;
    Step pause_reason_ = Step::need_more_data;
    int error_status_ = 0;
    const char* error_reason_ = "";
};

}  // namespace portico::http1
