#include "proxy/response_parser.hpp"

#include <charconv>

#include "http/header_text.hpp"

namespace portico::proxy {

namespace {

// Keep-Alive: timeout=5, max=1000 (RFC 2068 19.7.1.1, what Node sends).
uint64_t keep_alive_timeout(std::string_view value) {
    uint64_t seconds = 0;
    http::for_each_list_member(value, [&](std::string_view member) {
        if (member.size() > 8 && http::equals_ignore_case(member.substr(0, 8), "timeout=")) {
            std::string_view digits = member.substr(8);
            std::from_chars(digits.data(), digits.data() + digits.size(), seconds);
        }
    });
    return seconds;
}

}  // namespace

const llhttp_settings_t ResponseParser::settings = [] {
    llhttp_settings_t s;
    llhttp_settings_init(&s);
    s.on_status = on_status;
    s.on_header_field = on_header_field;
    s.on_header_value = on_header_value;
    s.on_header_value_complete = on_header_value_complete;
    s.on_headers_complete = on_headers_complete;
    s.on_body = on_body;
    s.on_message_complete = on_message_complete;
    return s;
}();

ResponseParser::ResponseParser(bool head_request, BodySink& sink)
    : head_request_(head_request), sink_(sink) {
    llhttp_init(&parser_, HTTP_RESPONSE, &settings);
    parser_.data = this;
    // Most responses have fewer headers: one allocation per response.
    response_.headers.reserve(16);
}

ResponseParser& ResponseParser::from(llhttp_t* parser) {
    return *static_cast<ResponseParser*>(parser->data);
}

ResponseParser::Outcome ResponseParser::parse(const char* data, size_t size) {
    pause_reason_ = Step::need_more_data;
    llhttp_errno_t result = llhttp_execute(&parser_, data, size);
    if (result == HPE_OK) return {Step::need_more_data, size};
    size_t consumed = static_cast<size_t>(llhttp_get_error_pos(&parser_) - data);
    if (result == HPE_PAUSED) return {pause_reason_, consumed};
    // After a 101 the bytes are the tunnel's, not HTTP.
    if (result == HPE_PAUSED_UPGRADE) return {Step::need_more_data, consumed};
    return {Step::failed, consumed};
}

bool ResponseParser::finish() {
    // llhttp_finish calls on_message_complete, which pauses as after any
    // message: HPE_PAUSED, not HPE_OK, says the body was complete. (HPE_OK
    // comes from a parser already in error, or one that needed no close:
    // neither completed a message here.)
    return llhttp_finish(&parser_) == HPE_PAUSED;
}

void ResponseParser::resume() {
    if (llhttp_get_errno(&parser_) == HPE_PAUSED) llhttp_resume(&parser_);
}

void ResponseParser::next_message() {
    std::vector<http::HeaderField> headers = std::move(response_.headers);
    headers.clear();  // keeps its capacity
    response_ = UpstreamResponse{};
    response_.headers = std::move(headers);
    current_ = {};
    head_complete_ = false;
    resume();
}

int ResponseParser::on_status(llhttp_t*, const char*, size_t) { return HPE_OK; }

// Every refusal says why: the proxy logs error_reason(), which was null
// after these two (found by fuzz_response_parser; spdlog then wrote
// "LOG ERROR" instead of the upstream's fault).
int ResponseParser::refuse(llhttp_t* parser, const char* reason) {
    llhttp_set_error_reason(parser, reason);
    return HPE_USER;
}

int ResponseParser::on_header_field(llhttp_t* parser, const char* at, size_t length) {
    if (http::extend_span(from(parser).current_.name, at, length)) return HPE_OK;
    return refuse(parser, "malformed header name");
}

int ResponseParser::on_header_value(llhttp_t* parser, const char* at, size_t length) {
    // A folded line (obs-fold) is malformed for us: 502 (RFC 9112 5.2).
    if (http::extend_span(from(parser).current_.value, at, length)) return HPE_OK;
    return refuse(parser, "obsolete line folding in a header");
}

int ResponseParser::on_header_value_complete(llhttp_t* parser) {
    ResponseParser& self = from(parser);
    http::HeaderField field = self.current_;
    self.current_ = {};
    if (field.value.data() == nullptr) field.value = {};
    self.response_.headers.push_back(field);
    if (http::equals_ignore_case(field.name, "keep-alive"))
        self.response_.keep_alive_timeout_s = keep_alive_timeout(field.value);
    return HPE_OK;
}

int ResponseParser::on_headers_complete(llhttp_t* parser) {
    ResponseParser& self = from(parser);
    UpstreamResponse& response = self.response_;
    response.status = parser->status_code;
    // llhttp 8.1 takes a status of one or two digits ("HTTP/1.1 10 x", found
    // by fuzz_response_parser): RFC 9112 4 says three digits.
    if (response.status < 100 || response.status > 999)
        return refuse(parser, "status code of fewer than three digits");
    response.chunked = (parser->flags & F_CHUNKED) != 0;
    response.has_content_length = (parser->flags & F_CONTENT_LENGTH) != 0;
    response.content_length = response.has_content_length ? parser->content_length : 0;
    response.keep_alive = llhttp_should_keep_alive(parser) != 0;
    self.head_complete_ = true;
    // What returning 1 would do (no body), while still pausing here. llhttp
    // leaves it to us (as Node's http does) for HEAD and for 204 and 304,
    // which may carry the representation's Content-Length but never a body.
    int status = response.status;
    bool no_body = self.head_request_ || status == 204 || status == 304 ||
                   (status >= 100 && status < 200 && status != 101);
    if (no_body) parser->flags |= F_SKIPBODY;
    self.pause_reason_ = Step::head_complete;
    return HPE_PAUSED;
}

int ResponseParser::on_body(llhttp_t* parser, const char* at, size_t length) {
    from(parser).sink_.on_decoded_body({at, length});
    return HPE_OK;
}

int ResponseParser::on_message_complete(llhttp_t* parser) {
    ResponseParser& self = from(parser);
    // should_keep_alive is only final once the message is complete.
    self.response_.keep_alive = llhttp_should_keep_alive(parser) != 0;
    self.pause_reason_ = Step::message_complete;
    return HPE_PAUSED;
}

}  // namespace portico::proxy
