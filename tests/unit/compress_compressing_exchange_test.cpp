// The compression filter (CompressionStream, behind the FilteredExchange it
// lends) against a fake exchange:
// what it decides from the request and the response head, what the client
// then gets, and back-pressure both ways. The real connection and real
// clients are in tests/integration/compress_*_test.cpp.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "compress/compressed_cache.hpp"
#include "compress/compression_filter.hpp"
#include "compress/encoder_memory.hpp"
#include "config/config.hpp"
#include "content_decoder.hpp"
#include "core/buffer_pool.hpp"
#include "fake_exchange.hpp"
#include "test_worker.hpp"

using namespace portico;
using portico::test::FakeExchange;

namespace {

// A handler's side: a listener that records what it hears.
struct HandlerSide : http::ExchangeListener {
    int drained = 0;
    bool gone = false;
    bool on_request_body(std::string_view) override { return true; }
    void on_request_complete() override {}
    void on_output_drained() override { ++drained; }
    void on_client_gone() override { gone = true; }
};

class Filter {
public:
    Filter() : worker_(whole_), cache_(1 << 20), blocks_(64 * 1024), memory_(4) {
        filter_ = std::make_unique<compress::CompressionFilter>(config_, cache_, blocks_, memory_,
                                                                worker_.counters());
    }
    http::Exchange& wrap(FakeExchange& client) { return filter_->wrap(client); }

private:
    config::CompressConfig config_;
    config::Config whole_;
    test::TestWorker worker_;
    compress::CompressedCache cache_;
    core::BufferPool blocks_;
    compress::EncoderMemory memory_;
    std::unique_ptr<compress::CompressionFilter> filter_;
};

const std::string page = [] {
    std::string text;
    for (int i = 0; i < 200; ++i) text += "<p>paragraph " + std::to_string(i) + " of a page</p>\n";
    return text;
}();

}  // namespace

TEST_CASE("compress filter: a streamed text response is compressed, its head changed",
          "[compress]") {
    Filter filter;
    FakeExchange client("GET", "/page", {{"Accept-Encoding", "gzip"}});
    http::Exchange& exchange = filter.wrap(client);
    REQUIRE(&exchange != &client);
    exchange.begin_streamed_response(200);
    exchange.add_header("Content-Type", "text/html");
    exchange.add_header("ETag", "\"v1\"");
    exchange.send_body(page.substr(0, 3000));
    exchange.send_body(page.substr(3000));
    exchange.end_response();
    REQUIRE(client.status == std::optional<int>(200));
    CHECK_FALSE(client.content_length.has_value());  // the length is no longer known
    CHECK(client.header("content-encoding") == "gzip");
    CHECK(client.header("vary") == "Accept-Encoding");
    CHECK(client.header("etag") == "W/\"v1\"");
    CHECK(client.ended);
    CHECK(client.body.size() < page.size());
    CHECK(test::decode_body("gzip", client.body) == std::optional<std::string>(page));
}

TEST_CASE("compress filter: each send is flushed, so a stream's pieces are decodable as they come",
          "[compress]") {
    Filter filter;
    FakeExchange client("GET", "/events", {{"Accept-Encoding", "br"}});
    http::Exchange& exchange = filter.wrap(client);
    exchange.begin_streamed_response(200);
    exchange.add_header("Content-Type", "text/event-stream");
    test::ContentDecoder decoder("br");
    exchange.send_body("data: one\n\n");
    REQUIRE(decoder.feed(client.body));
    CHECK(decoder.output() == "data: one\n\n");
    size_t seen = client.body.size();
    exchange.send_body("data: two\n\n");
    REQUIRE(decoder.feed(std::string_view(client.body).substr(seen)));
    CHECK(decoder.output() == "data: one\n\ndata: two\n\n");
    exchange.end_response();
}

TEST_CASE("compress filter: what must go out as it is passes unchanged", "[compress]") {
    struct Case {
        const char* name;
        int status;
        std::vector<std::pair<std::string, std::string>> headers;
        std::string body;
        std::string accept = "gzip, br";
    };
    const std::vector<Case> cases = {
        {"a type not in types", 200, {{"Content-Type", "image/png"}}, page},
        {"Cache-Control: no-transform",
         200,
         {{"Content-Type", "text/html"}, {"Cache-Control", "no-transform"}},
         page},
        {"already encoded",
         200,
         {{"Content-Type", "text/html"}, {"Content-Encoding", "gzip"}},
         page},
        {"below min_length", 200, {{"Content-Type", "text/html"}}, "short"},
        {"a 206",
         206,
         {{"Content-Type", "text/html"}, {"Content-Range", "bytes 0-9/100"}},
         page.substr(0, 10)},
        {"a client that accepts no coding we have",
         200,
         {{"Content-Type", "text/html"}},
         page,
         "identity"},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        Filter filter;
        FakeExchange client("GET", "/x", {{"Accept-Encoding", c.accept}});
        http::Exchange& exchange = filter.wrap(client);
        exchange.begin_response(c.status, c.body.size());
        for (const auto& [name, value] : c.headers) exchange.add_header(name, value);
        exchange.send_body(c.body);
        exchange.end_response();
        CHECK(client.status == std::optional<int>(c.status));
        CHECK(client.content_length == std::optional<uint64_t>(c.body.size()));
        CHECK(client.body == c.body);
        CHECK(client.header("content-encoding") ==
              (c.name == std::string("already encoded") ? "gzip" : ""));
    }
}

TEST_CASE("compress filter: HEAD and Range requests are not wrapped", "[compress]") {
    Filter filter;
    FakeExchange head("HEAD", "/x", {{"Accept-Encoding", "gzip"}});
    CHECK(&filter.wrap(head) == &head);
    FakeExchange range("GET", "/x", {{"Accept-Encoding", "gzip"}, {"Range", "bytes=0-9"}});
    CHECK(&filter.wrap(range) == &range);
}

TEST_CASE("compress filter: back-pressure: a client that does not read holds the handler back",
          "[compress]") {
    Filter filter;
    FakeExchange client("GET", "/stream", {{"Accept-Encoding", "gzip"}});
    http::Exchange& exchange = filter.wrap(client);
    HandlerSide handler;
    exchange.set_listener(&handler);
    exchange.begin_streamed_response(200);
    exchange.add_header("Content-Type", "text/plain");
    client.pending = true;  // what it sends now stays queued at the client
    exchange.send_body(page);
    CHECK(exchange.output_pending());
    client.drain();
    CHECK(handler.drained == 1);
    CHECK_FALSE(exchange.output_pending());
    exchange.send_body(page);
    exchange.end_response();
    CHECK(test::decode_body("gzip", client.body) == std::optional<std::string>(page + page));
}

TEST_CASE("compress filter: a client gone mid-stream reaches the handler", "[compress]") {
    Filter filter;
    FakeExchange client("GET", "/stream", {{"Accept-Encoding", "gzip"}});
    http::Exchange& exchange = filter.wrap(client);
    HandlerSide handler;
    exchange.set_listener(&handler);
    exchange.begin_streamed_response(200);
    exchange.add_header("Content-Type", "text/plain");
    exchange.send_body(page);
    client.go_away();
    CHECK(handler.gone);
}
