// The client-side parser as the connection drives it: one buffer (spans
// point into it), fed in reads of a fuzzer-chosen size, resumed after each
// head, restarted after each message (pipelining). Besides crashes and
// sanitizer reports, a request accepted against RFC 9112's rules is a
// finding: the checks below are the spec's "bad input" list.
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "http/header_text.hpp"
#include "http1/request_parser.hpp"

using portico::http1::RequestParser;

namespace {

struct Receiver final : RequestParser::BodyReceiver {
    size_t bytes = 0;
    bool on_request_body(std::string_view chunk) override {
        bytes += chunk.size();
        return true;
    }
};

bool within(std::string_view span, const char* begin, const char* end) {
    return span.empty() || (span.data() >= begin && span.data() + span.size() <= end);
}

bool has_whitespace_edge(std::string_view name) {
    return !name.empty() && (name.back() == ' ' || name.back() == '\t' || name.front() == ' ');
}

void check_accepted(const portico::http::Request& request, const char* begin, const char* end) {
    using portico::http::equals_ignore_case;
    FUZZ_CHECK(within(request.target, begin, end));
    FUZZ_CHECK(within(request.method_name, begin, end));
    FUZZ_CHECK(!request.path.empty() && request.path.front() == '/');
    size_t hosts = 0, lengths = 0, encodings = 0;
    for (const auto& field : request.headers) {
        FUZZ_CHECK(within(field.name, begin, end));
        FUZZ_CHECK(within(field.value, begin, end));
        FUZZ_CHECK(!field.name.empty());
        FUZZ_CHECK(!has_whitespace_edge(field.name));  // RFC 9112 5.1
        // No CR, LF or NUL survives in a value (obs-fold is refused).
        FUZZ_CHECK(field.value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos);
        if (equals_ignore_case(field.name, "host")) ++hosts;
        if (equals_ignore_case(field.name, "content-length")) ++lengths;
        if (equals_ignore_case(field.name, "transfer-encoding")) ++encodings;
    }
    FUZZ_CHECK(hosts <= 1);
    if (request.version_minor == 1) FUZZ_CHECK(request.host.data() != nullptr);
    // Both framings at once is a smuggling request: 400 (RFC 9112 6.1).
    FUZZ_CHECK(!(lengths > 0 && encodings > 0));
    FUZZ_CHECK(!(request.chunked && request.has_content_length));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t length) {
    portico::fuzz::Splits splits(data, length);
    // A copy the spans may point into, as the connection's buffer.
    std::string buffer(reinterpret_cast<const char*>(data), length);
    const char* begin = buffer.data();
    const char* end = begin + buffer.size();
    Receiver receiver;
    RequestParser parser;
    parser.restart(receiver);
    size_t position = 0;
    size_t limit = 0;  // bytes "received" so far
    for (int steps = 0; steps < 100000; ++steps) {
        if (position == limit) {
            if (limit == buffer.size()) break;
            limit += std::min(splits.size, buffer.size() - limit);
        }
        RequestParser::Outcome outcome = parser.parse(begin + position, limit - position);
        FUZZ_CHECK(outcome.consumed <= limit - position);
        position += outcome.consumed;
        switch (outcome.step) {
        case RequestParser::Step::need_more_data:
            FUZZ_CHECK(position == limit);
            break;
        case RequestParser::Step::head_complete:
            check_accepted(parser.request(), begin, end);
            parser.resume();
            break;
        case RequestParser::Step::body_paused:
            parser.resume();
            break;
        case RequestParser::Step::message_complete:
            check_accepted(parser.request(), begin, end);
            parser.restart(receiver);
            break;
        case RequestParser::Step::failed: {
            int status = parser.error_status();
            FUZZ_CHECK(status == 400 || status == 417 || status == 501 || status == 505);
            FUZZ_CHECK(parser.error_reason() != nullptr);
            return 0;  // the connection answers and closes
        }
        }
    }
    return 0;
}
