// The upstream response parser as the proxy drives it: reads of a
// fuzzer-chosen size, interim 1xx responses skipped, the upstream's close at
// the end. Whatever the upstream sends, the parser says "more", "head",
// "complete" or "failed", and never reports a body for a bodiless response.
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "proxy/response_parser.hpp"

using portico::proxy::ResponseParser;

namespace {

struct Sink final : ResponseParser::BodySink {
    size_t bytes = 0;
    void on_decoded_body(std::string_view piece) override { bytes += piece.size(); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t length) {
    portico::fuzz::Splits splits(data, length);
    bool head_request = length > 0 && (data[0] & 1);
    std::string buffer(reinterpret_cast<const char*>(data), length);
    Sink sink;
    ResponseParser parser(head_request, sink);
    size_t position = 0, limit = 0;
    bool head_seen = false;
    for (int steps = 0; steps < 100000; ++steps) {
        if (position == limit) {
            if (limit == buffer.size()) {
                parser.finish();  // the upstream closed
                return 0;
            }
            limit += std::min(splits.size, buffer.size() - limit);
        }
        ResponseParser::Outcome outcome = parser.parse(buffer.data() + position, limit - position);
        FUZZ_CHECK(outcome.consumed <= limit - position);
        position += outcome.consumed;
        switch (outcome.step) {
        case ResponseParser::Step::need_more_data:
            break;
        case ResponseParser::Step::head_complete: {
            int status = parser.response().status;
            FUZZ_CHECK(status >= 100 && status <= 999);
            // After a 101 the proxy tunnels raw bytes: no more parsing.
            if (status == 101) return 0;
            head_seen = status >= 200;
            sink.bytes = 0;
            parser.resume();
            break;
        }
        case ResponseParser::Step::message_complete: {
            int status = parser.response().status;
            if (head_request || status == 204 || status == 304 || (status >= 100 && status < 200))
                FUZZ_CHECK(sink.bytes == 0);
            if (!head_seen) {
                parser.next_message();  // an interim 1xx
                break;
            }
            return 0;  // the proxy is done with this response
        }
        case ResponseParser::Step::failed:
            FUZZ_CHECK(parser.error_reason() != nullptr);
            return 0;
        }
    }
    return 0;
}
