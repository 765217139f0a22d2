// llhttp in response mode, strict, for one upstream response: it pauses
// after the head (the proxy forwards it before any body byte) and after the
// message (the checklist for reuse then runs). Header views point into the
// proxy's read buffer, which is not moved while a head is parsed.
#pragma once

#include <llhttp.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "http/request.hpp"

namespace portico::proxy {

struct UpstreamResponse {
    int status = 0;
    std::vector<http::HeaderField> headers;
    bool has_content_length = false;
    uint64_t content_length = 0;
    bool chunked = false;
    bool keep_alive = false;       // HTTP/1.1 without Connection: close
    uint64_t keep_alive_timeout_s = 0;  // Keep-Alive: timeout=N, 0 when absent
};

class ResponseParser {
public:
    class BodySink {
    public:
        // The decoded body (chunk framing removed), piece by piece.
        virtual void on_decoded_body(std::string_view piece) = 0;

    protected:
        ~BodySink() = default;
    };
    // `head_request`: the response to a HEAD has no body, whatever it says.
    ResponseParser(bool head_request, BodySink& sink);
    ResponseParser(const ResponseParser&) = delete;
    ResponseParser& operator=(const ResponseParser&) = delete;

    enum class Step { need_more_data, head_complete, message_complete, failed };
    struct Outcome {
        Step step;
        size_t consumed;
    };
    Outcome parse(const char* data, size_t size);
    // The upstream closed: true when that completed the message (a body
    // delimited by the close, RFC 9112 6.3 rule 8).
    bool finish();
    void resume();
    // Starts over for the final response after an interim 1xx one.
    void next_message();

    bool in_head() const { return !head_complete_; }
    // The body runs until the upstream closes (HTTP/1.0 style): no length,
    // no chunks, and a response that may have a body at all.
    bool ends_at_close() const {
        int status = response_.status;
        bool bodyless = head_request_ || status < 200 || status == 204 || status == 304;
        return head_complete_ && !bodyless && !response_.chunked && !response_.has_content_length;
    }
    const UpstreamResponse& response() const { return response_; }
    // Never null: llhttp's reason, else its error's name.
    const char* error_reason() const {
        const char* reason = llhttp_get_error_reason(&parser_);
        return reason != nullptr ? reason : llhttp_errno_name(llhttp_get_errno(&parser_));
    }

private:
    static const llhttp_settings_t settings;
    static ResponseParser& from(llhttp_t* parser);
    static int on_status(llhttp_t* parser, const char* at, size_t length);
    static int refuse(llhttp_t* parser, const char* reason);
    static int on_header_field(llhttp_t* parser, const char* at, size_t length);
    static int on_header_value(llhttp_t* parser, const char* at, size_t length);
    static int on_header_value_complete(llhttp_t* parser);
    static int on_headers_complete(llhttp_t* parser);
    static int on_body(llhttp_t* parser, const char* at, size_t length);
    static int on_message_complete(llhttp_t* parser);

    llhttp_t parser_;
    bool head_request_;
    BodySink& sink_;
    UpstreamResponse response_;
    http::HeaderField current_{};
    bool head_complete_ = false;
    Step pause_reason_ = Step::need_more_data;
};

}  // namespace portico::proxy
