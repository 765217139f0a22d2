#include "http1/request_parser.hpp"

namespace portico::http1 {

namespace {

// Every coding in a Transfer-Encoding value must be one we can decode; only
// chunked is (RFC 9112 6.1: otherwise 501). Its position is llhttp's check.
bool only_chunked_codings(std::string_view value) {
    bool only_chunked = true;
    http::for_each_list_member(value, [&](std::string_view coding) {
        if (!http::equals_ignore_case(coding, "chunked")) only_chunked = false;
    });
    return only_chunked;
}

// "Transfer-Encoding:" with no coding at all: llhttp then frames the body by
// Content-Length, while an upstream that sees the header may not (found by
// fuzz_request_parser: a smuggling lever).
bool names_a_coding(std::string_view value) {
    bool any = false;
    http::for_each_list_member(value, [&](std::string_view) { any = true; });
    return any;
}

}  // namespace

const llhttp_settings_t RequestParser::settings = [] {
    llhttp_settings_t s;
    llhttp_settings_init(&s);
    s.on_message_begin = on_message_begin;
    s.on_method = on_method;
    s.on_url = on_url;
    s.on_url_complete = on_url_complete;
    s.on_header_field = on_header_field;
    s.on_header_field_complete = on_header_field_complete;
    s.on_header_value = on_header_value;
    s.on_header_value_complete = on_header_value_complete;
    s.on_headers_complete = on_headers_complete;
    s.on_body = on_body;
    s.on_message_complete = on_message_complete;
    return s;
}();

RequestParser::RequestParser() {
    llhttp_init(&parser_, HTTP_REQUEST, &settings);
}

void RequestParser::restart(BodyReceiver& receiver) {
    llhttp_init(&parser_, HTTP_REQUEST, &settings);
    parser_.data = this;
    receiver_ = &receiver;
    request_.reset();
    current_ = {};
    in_message_ = url_complete_ = head_complete_ = false;
    pause_reason_ = Step::need_more_data;
    error_status_ = 0;
    error_reason_ = "";
}

RequestParser& RequestParser::from(llhttp_t* parser) {
    return *static_cast<RequestParser*>(parser->data);
}

RequestParser::Outcome RequestParser::parse(const char* data, size_t size) {
    pause_reason_ = Step::need_more_data;
    llhttp_errno_t result = llhttp_execute(&parser_, data, size);
    if (result == HPE_OK) return {Step::need_more_data, size};
    size_t consumed = static_cast<size_t>(llhttp_get_error_pos(&parser_) - data);
    if (result == HPE_PAUSED) return {pause_reason_, consumed};
    if (error_status_ == 0) {
        error_status_ = 400;
        error_reason_ = llhttp_get_error_reason(&parser_);
        if (error_reason_ == nullptr) error_reason_ = llhttp_errno_name(result);
    }
    return {Step::failed, consumed};
}

void RequestParser::resume() {
    if (llhttp_get_errno(&parser_) == HPE_PAUSED) llhttp_resume(&parser_);
}

int RequestParser::fail(int status, const char* reason) {
    error_status_ = status;
    error_reason_ = reason;
    llhttp_set_error_reason(&parser_, reason);
    return HPE_USER;
}

int RequestParser::on_message_begin(llhttp_t* parser) {
    RequestParser& self = from(parser);
    self.request_.reset();
    self.current_ = {};
    self.in_message_ = true;
    self.url_complete_ = false;
    self.head_complete_ = false;
    return HPE_OK;
}

int RequestParser::on_method(llhttp_t* parser, const char* at, size_t length) {
    RequestParser& self = from(parser);
    http::extend_span(self.request_.method_name, at, length);
    return HPE_OK;
}

int RequestParser::on_url(llhttp_t* parser, const char* at, size_t length) {
    RequestParser& self = from(parser);
    http::extend_span(self.request_.target, at, length);
    return HPE_OK;
}

int RequestParser::on_url_complete(llhttp_t* parser) {
    from(parser).url_complete_ = true;
    return HPE_OK;
}

int RequestParser::on_header_field(llhttp_t* parser, const char* at, size_t length) {
    RequestParser& self = from(parser);
    if (!http::extend_span(self.current_.name, at, length))
        return self.fail(400, "malformed header name");
    return HPE_OK;
}

// llhttp (even strict) takes "Name : value" and keeps the space in the
// name. RFC 9112 5.1 says a server MUST answer 400: proxies and apps
// disagree on such a field (one trims it, one does not), a smuggling lever.
int RequestParser::on_header_field_complete(llhttp_t* parser) {
    RequestParser& self = from(parser);
    std::string_view name = self.current_.name;
    if (!name.empty() && (name.back() == ' ' || name.back() == '\t'))
        return self.fail(400, "whitespace between a header name and its colon");
    // In a chunked body's trailers llhttp takes " name: value", a folded
    // line where a field should start (found by fuzz_request_parser).
    if (!name.empty() && (name.front() == ' ' || name.front() == '\t'))
        return self.fail(400, "whitespace before a header name");
    return HPE_OK;
}

int RequestParser::on_header_value(llhttp_t* parser, const char* at, size_t length) {
    RequestParser& self = from(parser);
    if (!http::extend_span(self.current_.value, at, length))
        return self.fail(400, "obsolete line folding in a header value");
    return HPE_OK;
}

int RequestParser::on_header_value_complete(llhttp_t* parser) {
    RequestParser& self = from(parser);
    http::HeaderField field = self.current_;
    // llhttp 8.1 takes ": value", a field without a name (found by
    // fuzz_request_parser); a field name is a token of one character or more
    // (RFC 9110 5.1).
    if (field.name.empty()) return self.fail(400, "header field without a name");
    if (field.value.data() == nullptr) field.value = {};
    self.current_ = {};
    // A chunked body's trailer fields are dropped, as nginx does: none may
    // change the head already handled, least of all its framing (RFC 9110
    // 6.5.1; a Content-Length among them was found by fuzz_request_parser).
    if (self.head_complete_) return HPE_OK;
    self.request_.headers.push_back(field);
    return self.interpret_header(field);
}

int RequestParser::interpret_header(const http::HeaderField& field) {
    if (http::equals_ignore_case(field.name, "host")) {
        if (request_.host.data() != nullptr) return fail(400, "more than one Host header");
        request_.host = field.value;
    } else if (http::equals_ignore_case(field.name, "transfer-encoding")) {
        if (!names_a_coding(field.value)) return fail(400, "Transfer-Encoding without a coding");
        if (!only_chunked_codings(field.value)) return fail(501, "unsupported transfer coding");
    } else if (http::equals_ignore_case(field.name, "expect")) {
        if (!http::equals_ignore_case(field.value, "100-continue"))
            return fail(417, "unsupported expectation");
        request_.expect_continue = true;
    }
    return HPE_OK;
}

// Splits an origin-form ("/p?q") or absolute-form ("http://h/p?q") target.
bool RequestParser::split_target() {
    std::string_view target = request_.target;
    for (std::string_view scheme : {std::string_view("http://"), std::string_view("https://")}) {
        if (target.size() > scheme.size() &&
            http::equals_ignore_case(target.substr(0, scheme.size()), scheme)) {
            target.remove_prefix(scheme.size());
            size_t slash = target.find_first_of("/?");
            request_.authority = target.substr(0, slash);
            target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
            if (target.front() == '?') return false;
            break;
        }
    }
    if (target.empty() || target.front() != '/') return false;
    size_t question = target.find('?');
    request_.path = target.substr(0, question);
    if (question != std::string_view::npos) request_.query = target.substr(question + 1);
    return true;
}

int RequestParser::on_headers_complete(llhttp_t* parser) {
    RequestParser& self = from(parser);
    http::Request& request = self.request_;
    if (parser->http_major != 1) return self.fail(505, "only HTTP/1.0 and HTTP/1.1 are served");
    request.method = parser->method;
    request.version_minor = parser->http_minor;
    if (!self.split_target()) return self.fail(400, "request target is not a path");
    // RFC 9110 7.2: an absolute-form target's authority replaces Host.
    if (!request.authority.empty()) request.host = request.authority;
    if (request.version_minor == 1 && request.host.data() == nullptr)
        return self.fail(400, "HTTP/1.1 request without a Host header");
    // An empty Host names no site: nginx answers 400 too.
    if (request.host.data() != nullptr && request.host.empty())
        return self.fail(400, "empty Host header");
    if (!http::is_valid_host(request.host)) return self.fail(400, "invalid Host header");
    // RFC 9112 6.1: Transfer-Encoding in an HTTP/1.0 request means faulty
    // framing (a 1.0 hop may not have understood it); 400 and close, as nginx.
    if (request.version_minor == 0 && (parser->flags & F_TRANSFER_ENCODING) != 0)
        return self.fail(400, "Transfer-Encoding in an HTTP/1.0 request");
    request.chunked = (parser->flags & F_CHUNKED) != 0;
    request.has_content_length = (parser->flags & F_CONTENT_LENGTH) != 0;
    request.content_length = request.has_content_length ? parser->content_length : 0;
    request.wants_keep_alive = llhttp_should_keep_alive(parser) != 0;
    request.upgrade = parser->upgrade != 0;
    if (!request.has_body()) request.expect_continue = false;
    self.head_complete_ = true;
    self.pause_reason_ = Step::head_complete;
    return HPE_PAUSED;
}

int RequestParser::on_body(llhttp_t* parser, const char* at, size_t length) {
    RequestParser& self = from(parser);
    if (self.receiver_->on_request_body({at, length})) return HPE_OK;
    self.pause_reason_ = Step::body_paused;
    return HPE_PAUSED;
}

int RequestParser::on_message_complete(llhttp_t* parser) {
    RequestParser& self = from(parser);
    self.in_message_ = false;
    self.pause_reason_ = Step::message_complete;
    return HPE_PAUSED;
}

}  // namespace portico::http1
