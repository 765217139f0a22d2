// The generic filter adapter (http::FilteredExchange) against a fake
// client exchange: a handler's Exchange calls reach a filter as head, body,
// end and abort, in order, for every kind of body; what the filter passes
// on reaches the client; back-pressure and the client's events go both
// ways; exchanges are lent and given back.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/buffer_pool.hpp"
#include "fake_exchange.hpp"
#include "http/filtered_exchange.hpp"
#include "http/response_filter.hpp"

using namespace portico;
using portico::test::FakeExchange;

namespace {

// What a filter stream was told, one line per call.
using CallLog = std::vector<std::string>;

std::string describe(const http::BodyPart& part) {
    std::string line = "body";
    switch (part.kind) {
    case http::BodyPart::Kind::memory:
        line += " memory";
        for (std::string_view piece : part.pieces) line.append(" '").append(piece).append("'");
        break;
    case http::BodyPart::Kind::owned:
        line.append(" owned '").append(part.pieces.front()).append("'");
        break;
    case http::BodyPart::Kind::file:
        line += " file " + std::to_string(part.offset) + "+" + std::to_string(part.length);
        break;
    }
    if (part.owner) line += " owner";
    if (part.block) line += " block";
    if (part.more_expected) line += " more";
    if (part.flush) line += " flush";
    if (part.last) line += " last";
    return line;
}

// Upper-cases what it gets in memory, passes owned bodies and files on as
// they are, marks the head, and logs every call. Declines "/plain".
class UpperCaseStream final : public http::FilterStream {
public:
    explicit UpperCaseStream(CallLog& log) : log_(log) {}
    bool start(const http::Request& request) override {
        if (request.path == "/plain") return false;
        log_.push_back("start");
        return true;
    }
    void head(http::HeadersOut& head) override {
        std::string line = "head " + std::to_string(head.status) +
                           (head.length ? " length " + std::to_string(*head.length) : " streamed");
        for (size_t index = 0; index < head.fields.size(); ++index)
            line.append(" ").append(head.fields.name(index));
        log_.push_back(line);
        head.fields.add("X-Filtered", "upper");
        next().head(head);
    }
    void body(http::BodyPart& part) override {
        log_.push_back(describe(part));
        if (part.kind != http::BodyPart::Kind::memory) {
            next().body(part);
            return;
        }
        // Kept until the next call: the fake client copies at once.
        upper_.clear();
        views_.clear();
        for (std::string_view piece : part.pieces) upper_.emplace_back(piece);
        for (std::string& piece : upper_) {
            for (char& c : piece)
                c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            views_.push_back(piece);
        }
        part.pieces = views_;
        next().body(part);
    }
    void end() override {
        log_.push_back("end");
        next().end();
    }
    void abort() override { log_.push_back("abort"); }
    // A test makes it give up.
    void give_up() { next().abort(); }

private:
    CallLog& log_;
    std::vector<std::string> upper_;
    std::vector<std::string_view> views_;
};

// Holds every memory piece while the client has output pending and passes
// one on per drain: a filter with output of its own waiting.
class HoldingStream final : public http::FilterStream {
public:
    bool start(const http::Request&) override { return true; }
    void head(http::HeadersOut& head) override {
        next().listen();
        next().head(head);
    }
    void body(http::BodyPart& part) override {
        for (std::string_view piece : part.pieces) held_.emplace_back(piece);
        pass_one();
    }
    void end() override {
        ending_ = true;
        pass_one();
    }
    void abort() override { held_.clear(); }
    bool holds_output() const override { return !held_.empty(); }
    void on_output_drained() override { pass_one(); }

private:
    void pass_one() {
        if (!held_.empty() && !next().pending()) {
            passing_ = held_.front();
            held_.erase(held_.begin());
            std::string_view piece = passing_;
            http::BodyPart part;
            part.pieces = {&piece, 1};
            next().body(part);
        }
        if (ending_ && held_.empty()) {
            ending_ = false;
            next().end();
        }
    }
    std::vector<std::string> held_;
    std::string passing_;
    bool ending_ = false;
};

template <class Stream>
class TestFilter final : public http::ResponseFilter {
public:
    CallLog log;
    Stream* last_stream = nullptr;

protected:
    std::unique_ptr<http::FilterStream> new_stream() override {
        std::unique_ptr<Stream> stream;
        if constexpr (std::is_constructible_v<Stream, CallLog&>)
            stream = std::make_unique<Stream>(log);
        else
            stream = std::make_unique<Stream>();
        last_stream = stream.get();
        return stream;
    }
};

// A handler that answers later: what it hears.
struct HandlerSide : http::ExchangeListener {
    int drained = 0;
    bool gone = false;
    std::string request_body;
    bool on_request_body(std::string_view data) override {
        request_body.append(data);
        return true;
    }
    void on_request_complete() override {}
    void on_output_drained() override { ++drained; }
    void on_client_gone() override { gone = true; }
};

// A file with `text` in it, removed at the end.
class TempFile {
public:
    explicit TempFile(std::string_view text) {
        char name[] = "/tmp/portico-filtered-XXXXXX";
        fd_ = ::mkstemp(name);
        REQUIRE(fd_ >= 0);
        path_ = name;
        REQUIRE(::write(fd_, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    }
    ~TempFile() {
        ::close(fd_);
        ::unlink(path_.c_str());
    }
    int fd() const { return fd_; }

private:
    int fd_;
    std::string path_;
};

}  // namespace

TEST_CASE("filtered exchange: a response with a length: start, head, body, end, in order",
          "[filter]") {
    TestFilter<UpperCaseStream> filter;
    FakeExchange client("GET", "/page");
    http::Exchange& exchange = filter.wrap(client);
    REQUIRE(&exchange != &client);
    exchange.begin_response(200, 5);
    exchange.add_header("Content-Type", "text/plain");
    exchange.add_header("ETag", "\"v1\"");
    CHECK(filter.log == CallLog{"start"});  // the head waits for the body
    exchange.send_body("hello");
    exchange.end_response();
    CHECK(filter.log ==
          CallLog{"start", "head 200 length 5 Content-Type ETag", "body memory 'hello'", "end"});
    CHECK(client.status == std::optional<int>(200));
    CHECK(client.content_length == std::optional<uint64_t>(5));
    CHECK(client.header("etag") == "\"v1\"");
    CHECK(client.header("x-filtered") == "upper");
    CHECK(client.body == "HELLO");
    CHECK(client.ended);
}

TEST_CASE("filtered exchange: a streamed response, its last pieces ending it in the same call",
          "[filter]") {
    TestFilter<UpperCaseStream> filter;
    FakeExchange client("GET", "/stream");
    http::Exchange& exchange = filter.wrap(client);
    exchange.begin_streamed_response(200);
    exchange.send_body("one ");
    exchange.expect_more_body();
    std::string_view pieces[] = {"two ", "three "};
    exchange.send_body_pieces(pieces, false);
    exchange.flush_body();
    std::string_view last[] = {"four"};
    exchange.send_body_pieces(last, true);
    CHECK(filter.log == CallLog{"start", "head 200 streamed", "body memory 'one '",
                                "body memory 'two ' 'three ' more", "body memory flush",
                                "body memory 'four' last"});
    CHECK_FALSE(client.content_length.has_value());
    CHECK(client.body == "ONE TWO THREE FOUR");
    CHECK(client.ended);
}

TEST_CASE("filtered exchange: an owned body and a file range arrive with their owners",
          "[filter]") {
    auto owner = std::make_shared<int>(1);
    SECTION("owned bytes") {
        TestFilter<UpperCaseStream> filter;
        FakeExchange client("GET", "/owned");
        http::Exchange& exchange = filter.wrap(client);
        exchange.begin_response(200, 5);
        exchange.send_owned_body("owned", owner);
        exchange.end_response();
        CHECK(filter.log ==
              CallLog{"start", "head 200 length 5", "body owned 'owned' owner", "end"});
        CHECK(client.body == "owned");
        CHECK(client.owner == owner);  // the same owner: what the client keeps alive
        CHECK(client.ended);
    }
    SECTION("a file range") {
        TempFile file("0123456789");
        TestFilter<UpperCaseStream> filter;
        FakeExchange client("GET", "/file");
        http::Exchange& exchange = filter.wrap(client);
        exchange.begin_response(200, 4);
        exchange.send_file(file.fd(), 3, 4, owner);
        exchange.end_response();
        CHECK(filter.log == CallLog{"start", "head 200 length 4", "body file 3+4 owner", "end"});
        CHECK(client.body == "3456");
        CHECK(client.owner == owner);
        CHECK(client.ended);
    }
}

TEST_CASE("filtered exchange: a handed-over block goes with a body part to the client",
          "[filter]") {
    core::BufferPool pool(4096);
    char* block = pool.acquire();
    TestFilter<UpperCaseStream> filter;
    FakeExchange client("GET", "/proxied");
    http::Exchange& exchange = filter.wrap(client);
    exchange.begin_response(200, 3);
    exchange.hand_over_buffer(pool, block);
    exchange.send_body_pieces({}, true);
    CHECK(filter.log ==
          CallLog{"start", "head 200 length 3", "body memory block", "body memory last"});
    // The fake client gives a handed block back at once: the pool has it.
    char* again = pool.acquire();
    CHECK(static_cast<void*>(again) == static_cast<void*>(block));
    pool.release(again);
}

TEST_CASE("filtered exchange: respond_text is a head and a last body part", "[filter]") {
    TestFilter<UpperCaseStream> filter;
    FakeExchange client("GET", "/missing");
    http::Exchange& exchange = filter.wrap(client);
    exchange.begin_response(200, 100);  // what the handler began is replaced
    exchange.add_header("X-Dropped", "1");
    exchange.respond_text(404, "Not Found\n");
    CHECK(filter.log ==
          CallLog{"start", "head 404 length 10 Content-Type", "body memory 'Not Found\n' last"});
    CHECK(client.status == std::optional<int>(404));
    CHECK_FALSE(client.has_header("x-dropped"));
    CHECK(client.body == "NOT FOUND\n");
    CHECK(client.ended);
}

TEST_CASE("filtered exchange: abort, from the handler, the client or the filter", "[filter]") {
    TestFilter<UpperCaseStream> filter;
    FakeExchange client("GET", "/stream");
    http::Exchange& exchange = filter.wrap(client);
    HandlerSide handler;
    exchange.set_listener(&handler);
    CHECK(client.listener != nullptr);  // the handler listens, through the exchange
    exchange.begin_streamed_response(200);
    exchange.send_body("part");
    SECTION("the handler aborts: the filter drops what it holds, the client is cut") {
        exchange.abort();
        CHECK(filter.log.back() == "abort");
        CHECK(client.aborted);
        CHECK_FALSE(client.ended);
        CHECK_FALSE(handler.gone);
    }
    SECTION("the client goes: the filter hears abort, then the handler its client gone") {
        client.go_away();
        CHECK(filter.log.back() == "abort");
        CHECK(handler.gone);
        CHECK_FALSE(client.aborted);
    }
    SECTION("the filter gives up: the client is cut and the handler hears its client gone") {
        filter.last_stream->give_up();
        CHECK(client.aborted);
        CHECK(handler.gone);
        CHECK(filter.log.back() == "body memory 'part'");  // the filter is not told its own abort
    }
    // Whatever the handler still sends reaches nobody.
    size_t calls = filter.log.size();
    exchange.send_body("more");
    exchange.end_response();
    CHECK(filter.log.size() == calls);
    CHECK(client.body == "PART");
}

TEST_CASE("filtered exchange: back-pressure: what the filter holds keeps the handler waiting",
          "[filter]") {
    TestFilter<HoldingStream> filter;
    FakeExchange client("GET", "/stream");
    http::Exchange& exchange = filter.wrap(client);
    HandlerSide handler;
    exchange.set_listener(&handler);
    exchange.begin_streamed_response(200);
    client.pending = true;  // the client reads nothing for now
    std::string_view pieces[] = {"a", "b"};
    exchange.send_body_pieces(pieces, false);
    CHECK(client.body.empty());
    CHECK(exchange.output_pending());
    client.drain();  // one piece goes on; the filter still holds one
    CHECK(client.body == "a");
    CHECK(exchange.output_pending());
    CHECK(handler.drained == 0);
    client.drain();  // the last piece goes on: now the handler hears it
    CHECK(client.body == "ab");
    CHECK_FALSE(exchange.output_pending());
    CHECK(handler.drained == 1);
    exchange.end_response();
    CHECK(client.ended);
}

TEST_CASE("filtered exchange: a filter that holds output hears drains without a handler listening",
          "[filter]") {
    TestFilter<HoldingStream> filter;
    FakeExchange client("GET", "/stream");
    http::Exchange& exchange = filter.wrap(client);
    exchange.begin_streamed_response(200);
    client.pending = true;
    exchange.send_body("x");
    exchange.end_response();  // the handler is done; the filter still holds "x"
    CHECK_FALSE(client.ended);
    REQUIRE(client.listener != nullptr);  // FilterOutput::listen
    client.drain();
    CHECK(client.body == "x");
    CHECK(client.ended);
}

TEST_CASE("filtered exchange: a declined request is answered on the client's own exchange",
          "[filter]") {
    TestFilter<UpperCaseStream> filter;
    FakeExchange client("GET", "/plain");
    CHECK(&filter.wrap(client) == &client);
    CHECK(filter.log.empty());
}

TEST_CASE("filtered exchange: an exchange is lent per running response and reused after",
          "[filter]") {
    TestFilter<UpperCaseStream> filter;
    FakeExchange first_client("GET", "/a");
    FakeExchange second_client("GET", "/b");
    http::Exchange& first = filter.wrap(first_client);
    http::Exchange& second = filter.wrap(second_client);
    CHECK(&first != &second);  // two responses at once: two exchanges
    first.begin_response(200, 1);
    first.send_body("a");
    first.end_response();
    FakeExchange third_client("GET", "/c");
    http::Exchange& third = filter.wrap(third_client);
    CHECK(&third == &first);  // the first one's response is over
    CHECK(&third.request() == &third_client.request());
}
