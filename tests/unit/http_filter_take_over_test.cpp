// What error pages need of the filter adapter: a filter that takes the
// client's exchange over at a head (the handler told its client is gone,
// what it still sends dropped), two filters in a row (output_through), and
// an exchange given back unused (unwrap).
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "fake_exchange.hpp"
#include "http/filtered_exchange.hpp"
#include "http/response_filter.hpp"

using namespace portico;
using portico::test::FakeExchange;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers (Answer, fake_path...) must not meet.
namespace http_filter_take_over_test {

namespace {

// At a 404 head, answers "replaced" on the client itself; passes the rest.
class ReplacingStream final : public http::FilterStream {
public:
    bool start(const http::Request&) override { return true; }
    void head(http::HeadersOut& head) override {
        if (head.status != 404) {
            next().head(head);
            return;
        }
        next().take_over().respond_text(404, "replaced\n");
    }
    void body(http::BodyPart& part) override { next().body(part); }
    void end() override { next().end(); }
    void abort() override {}
};

// Adds "X-Mark: NAME" to every head.
class MarkingStream final : public http::FilterStream {
public:
    explicit MarkingStream(std::string name) : name_(std::move(name)) {}
    bool start(const http::Request&) override { return true; }
    void head(http::HeadersOut& head) override {
        head.fields.add("X-Mark", name_);
        next().head(head);
    }
    void body(http::BodyPart& part) override { next().body(part); }
    void end() override { next().end(); }
    void abort() override {}

private:
    std::string name_;
};

class ReplacingFilter final : public http::ResponseFilter {
protected:
    std::unique_ptr<http::FilterStream> new_stream() override {
        return std::make_unique<ReplacingStream>();
    }
};

class MarkingFilter final : public http::ResponseFilter {
public:
    explicit MarkingFilter(std::string name) : name_(std::move(name)) {}

protected:
    std::unique_ptr<http::FilterStream> new_stream() override {
        return std::make_unique<MarkingStream>(name_);
    }

private:
    std::string name_;
};

struct TakenOverHandler : http::ExchangeListener {
    bool gone = false;
    bool on_request_body(std::string_view) override { return true; }
    void on_request_complete() override {}
    void on_output_drained() override {}
    void on_client_gone() override { gone = true; }
};

}  // namespace

TEST_CASE("filter take-over: the filter answers on the client, the handler hears it is gone",
          "[filter][rules]") {
    ReplacingFilter filter;
    FakeExchange client("GET", "/x");
    http::Exchange& exchange = filter.wrap(client);
    TakenOverHandler handler;
    exchange.set_listener(&handler);
    exchange.begin_streamed_response(404);
    exchange.add_header("X-Upstream", "yes");
    exchange.send_body("the upstream's body");
    CHECK(handler.gone);
    CHECK(client.status == std::optional<int>(404));
    CHECK(client.body == "replaced\n");
    CHECK_FALSE(client.has_header("x-upstream"));
    CHECK(client.ended);
    CHECK(client.listener == nullptr);
    // What the handler still sends reaches nobody.
    exchange.send_body("more");
    exchange.end_response();
    CHECK(client.body == "replaced\n");

    // Given back: the next response gets an exchange again, passed through.
    FakeExchange next_client("GET", "/y");
    http::Exchange& next = filter.wrap(next_client);
    next.respond_text(200, "fine\n");
    CHECK(next_client.status == std::optional<int>(200));
    CHECK(next_client.body == "fine\n");
}

TEST_CASE("filter take-over: a handler's short answer is replaced the same way",
          "[filter][rules]") {
    ReplacingFilter filter;
    FakeExchange client("HEAD", "/x");
    filter.wrap(client).respond_text(404, "404 Not Found\n");
    CHECK(client.body == "replaced\n");
    CHECK(client.ended);
}

TEST_CASE("filters in a row: output_through puts the second one closer to the client",
          "[filter][rules]") {
    MarkingFilter inner("inner");
    MarkingFilter outer("outer");
    inner.output_through(outer);
    FakeExchange client("GET", "/x");
    inner.wrap(client).respond_text(200, "ok\n");
    REQUIRE(client.headers.size() >= 2);
    // The inner filter's head reaches the outer one, which adds its mark after.
    std::vector<std::string> marks;
    for (const auto& [name, value] : client.headers)
        if (name == "X-Mark") marks.push_back(value);
    CHECK(marks == std::vector<std::string>{"inner", "outer"});
    CHECK(client.body == "ok\n");
    CHECK(client.ended);
}

TEST_CASE("filter unwrap: an exchange lent but not answered through goes back unused",
          "[filter][rules]") {
    MarkingFilter filter("mark");
    FakeExchange client("GET", "/x");
    http::Exchange& lent = filter.wrap(client);
    REQUIRE(&lent != &client);
    filter.unwrap(lent, client);
    CHECK_FALSE(client.status.has_value());
    // The same exchange is lent again, and works.
    http::Exchange& again = filter.wrap(client);
    CHECK(&again == &lent);
    again.respond_text(200, "ok\n");
    CHECK(client.header("x-mark") == "mark");
    CHECK(client.ended);
}

}  // namespace http_filter_take_over_test
