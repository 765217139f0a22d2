#include "compress/compression_filter.hpp"

#include "compress/accept_encoding.hpp"
#include "http/header_text.hpp"

namespace portico::compress {

http::Exchange& CompressionFilter::wrap(http::Exchange& client) {
    const http::Request& request = client.request();
    // Never compressed, whatever the response: HEAD (no body), a Range
    // request (its offsets count the identity's bytes: it gets them), an
    // upgrade (a tunnel carries no body to encode). Such a request costs
    // nothing more than on a location without compress.
    if (request.is_head() || request.upgrade) return client;
    // The two headers read here, in one pass.
    std::string_view accept_encoding;
    for (const http::HeaderField& field : request.headers) {
        if (http::equals_ignore_case(field.name, "range")) return client;
        if (accept_encoding.empty() && http::equals_ignore_case(field.name, "accept-encoding"))
            accept_encoding = field.value;
    }
    CompressingExchange* exchange;
    if (free_.empty()) {
        exchanges_.push_back(std::make_unique<CompressingExchange>(*this));
        exchange = exchanges_.back().get();
    } else {
        exchange = free_.back();
        free_.pop_back();
    }
    exchange->start(client, negotiate_coding(accept_encoding, config::CodingSet::all()));
    return *exchange;
}

}  // namespace portico::compress
