// The HTTP/2 session's limits (the spec's "Limits that protect the server"):
// max_concurrent_streams, the rapid-reset budget, stream ids that go back,
// PING and SETTINGS floods, header lists over max_header_bytes. A real
// http2::Session on a worker's ServerContext, its output written by the real
// OutputQueue::flush into a socketpair, and a real nghttp2 client session
// (libnghttp2) that makes the client's frames and parses what comes back;
// frames nghttp2 would never send (a stream id that goes back) are made by
// hand. The loop's clock is never updated here, so the rate limits see every
// frame at the same millisecond: the budgets are counted exactly, no sleep.
// The same limits against the real binary: tests/integration/http2_bad_input_test.cpp.
#include <arpa/inet.h>
#include <fcntl.h>
#include <nghttp2/nghttp2.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "http/server_context.hpp"
#include "http2/session.hpp"
#include "transport/transport.hpp"
#include "worker/composition.hpp"
#include "test_worker.hpp"

using namespace portico;

namespace {

// As session.cpp has them: a burst of 200 resets (refilled at 50 a second),
// and 200 PING or SETTINGS frames a second.
constexpr int reset_burst = 200;
constexpr int control_frames_per_second = 200;

struct Limits {
    uint32_t max_concurrent_streams = 100;
    uint64_t max_header_bytes = 16 * 1024;
};

// ---- the server: the one place that builds the session's ServerContext ----

// One worker's state: the config (h2c, the limits asked for, a `respond`
// location at /hello), the shared counters and loop (TestWorker), and the
// ServerContext the session serves from, with the worker's composition.
// Declared in that order, so they go first.
struct Worker {
    config::Config config;
    std::unique_ptr<test::TestWorker> worker;
    std::unique_ptr<http::ServerContext> server;
    std::unique_ptr<portico::access::LimitZones> limits;
    std::unique_ptr<portico::worker::Composition> composition;  // the /hello handler
};

std::unique_ptr<Worker> make_worker(const Limits& limits) {
    std::string text = "[server]\nlisten = [\"127.0.0.1:8080\"]\nworkers = 1\nmax_header_bytes = " +
                       std::to_string(limits.max_header_bytes) +
                       "\n\n[log]\nlevel = \"error\"\naccess = \"off\"\n\n"
                       "[http2]\ncleartext = true\nmax_concurrent_streams = " +
                       std::to_string(limits.max_concurrent_streams) +
                       "\n\n[[location]]\nexact = \"/hello\"\n"
                       "respond = { status = 200, body = \"hello\\n\" }\n";
    config::LoadResult loaded =
        config::parse_config(text, "/tmp/portico-h2-session-test/portico.toml");
    std::string errors;
    for (const auto& error : loaded.errors) errors += error.message + "\n";
    INFO(errors);
    REQUIRE(loaded.errors.empty());
    auto made = std::make_unique<Worker>();
    made->config = std::move(*loaded.config);
    made->worker = std::make_unique<test::TestWorker>(made->config);
    made->server = std::make_unique<http::ServerContext>(made->worker->loop(), made->config,
                                                         made->worker->counters(), 0);
    std::string error;
    made->limits = portico::access::LimitZones::create(made->config, nullptr, error);
    made->composition =
        std::make_unique<portico::worker::Composition>(*made->server, 443, *made->limits);
    return made;
}

// ---- the transport: the connection's side, over a socketpair ----------------

class PairTransport final : public http2::Carrier {
public:
    PairTransport() {
        int pair[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
        server_fd_ = pair[0];
        client_fd_ = pair[1];
        for (int fd : pair) REQUIRE(::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) == 0);
        peer_.v4.sin_family = AF_INET;
        peer_.v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    }
    ~PairTransport() {
        ::close(server_fd_);
        ::close(client_fd_);
    }
    transport::Socket cleartext_{-1};
    PairTransport(const PairTransport&) = delete;
    PairTransport& operator=(const PairTransport&) = delete;

    void attach(http2::Session& session) { session_ = &session; }

    transport::OutputQueue::FlushResult write(transport::OutputQueue& output,
                                              uint64_t& sent) override {
        return output.flush(server_fd_, sent);
    }
    void set_output_blocked(bool now) override { blocked = now; }
    void arm_timer(config::Duration) override {}
    void disarm_timer() override {}
    // As ClientConnection::close does it, inside the session's own call.
    void end_session() override {
        ended = true;
        session_->connection_closed();
    }
    const http::PeerAddress& peer() const override { return peer_; }
    // Cleartext (h2c); the socketpair's ends are closed by this class.
    const transport::Transport& transport() const override { return cleartext_; }

    // Everything the client's end holds now.
    std::string read_client_end() {
        std::string bytes;
        char buffer[16 * 1024];
        for (ssize_t got; (got = ::read(client_fd_, buffer, sizeof buffer)) > 0;)
            bytes.append(buffer, static_cast<size_t>(got));
        return bytes;
    }

    bool blocked = false;
    bool ended = false;

private:
    int server_fd_ = -1;
    int client_fd_ = -1;
    http::PeerAddress peer_{};
    http2::Session* session_ = nullptr;
};

// ---- the client: a real nghttp2 client session --------------------------------

using Fields = std::vector<std::pair<std::string, std::string>>;

// No RST_STREAM or GOAWAY came (their codes are 32-bit).
constexpr int64_t none = -1;

// What came back on one stream.
struct Response {
    int status = 0;
    std::string body;
    int64_t reset = none;  // RST_STREAM's code
};

class Client {
public:
    Client() {
        nghttp2_session_callbacks* callbacks = nullptr;
        nghttp2_session_callbacks_new(&callbacks);
        nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, on_data);
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame);
        nghttp2_option* option = nullptr;
        nghttp2_option_new(&option);
        // Before the server's SETTINGS, nghttp2 holds a client to 100 streams.
        nghttp2_option_set_peer_max_concurrent_streams(option, 10000);
        REQUIRE(nghttp2_session_client_new2(&session_, callbacks, this, option) == 0);
        nghttp2_option_del(option);
        nghttp2_session_callbacks_del(callbacks);
        nghttp2_settings_entry no_push{NGHTTP2_SETTINGS_ENABLE_PUSH, 0};
        REQUIRE(nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, &no_push, 1) == 0);
    }
    ~Client() { nghttp2_session_del(session_); }
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    static Fields get_fields(const std::string& path, const std::string& method = "GET") {
        return {
            {":method", method}, {":scheme", "http"}, {":authority", "a.test"}, {":path", path}};
    }
    // A request; `body_held`: HEADERS without END_STREAM, and the (empty)
    // body's end only at end_body(): the stream stays open until then.
    int32_t request(const Fields& fields, bool body_held = false) {
        std::vector<nghttp2_nv> list;
        for (const auto& [name, value] : fields)
            list.push_back({reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                            reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())),
                            name.size(), value.size(), NGHTTP2_NV_FLAG_NONE});
        nghttp2_data_provider body{};
        body.source.ptr = this;
        body.read_callback = read_body;
        int32_t id = nghttp2_submit_request(session_, nullptr, list.data(), list.size(),
                                            body_held ? &body : nullptr, nullptr);
        REQUIRE(id > 0);
        return id;
    }
    int32_t get(const std::string& path) { return request(get_fields(path)); }
    void end_body(int32_t id) {
        bodies_ended_.insert(id);
        REQUIRE(nghttp2_session_resume_data(session_, id) == 0);
    }
    void reset(int32_t id) {
        REQUIRE(nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL) == 0);
    }
    // The next stream opened gets `id` (the ones below it are never used).
    void skip_to_stream(int32_t id) {
        REQUIRE(nghttp2_session_set_next_stream_id(session_, id) == 0);
    }
    void ping() { REQUIRE(nghttp2_submit_ping(session_, NGHTTP2_FLAG_NONE, nullptr) == 0); }
    void settings() {
        REQUIRE(nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, nullptr, 0) == 0);
    }

    // The frames nghttp2 made since the last call (the preface first).
    std::string output() {
        std::string bytes;
        const uint8_t* data = nullptr;
        for (ssize_t made; (made = nghttp2_session_mem_send(session_, &data)) > 0;)
            bytes.append(reinterpret_cast<const char*>(data), static_cast<size_t>(made));
        return bytes;
    }
    void input(const std::string& bytes) {
        if (bytes.empty()) return;
        ssize_t used = nghttp2_session_mem_recv(
            session_, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
        CHECK(used == static_cast<ssize_t>(bytes.size()));
    }

    // The server's SETTINGS as the client applied them.
    uint32_t server_setting(nghttp2_settings_id id) const {
        return nghttp2_session_get_remote_settings(session_, id);
    }
    bool server_settings_received = false;
    std::map<int32_t, Response> responses;
    int64_t goaway_code = none;
    int32_t goaway_last_stream = -1;
    int ping_acks = 0;

private:
    static int on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                         size_t name_length, const uint8_t* value, size_t value_length, uint8_t,
                         void* self) {
        std::string_view field(reinterpret_cast<const char*>(name), name_length);
        if (field == ":status")
            static_cast<Client*>(self)->responses[frame->hd.stream_id].status =
                std::stoi(std::string(reinterpret_cast<const char*>(value), value_length));
        return 0;
    }
    static int on_data(nghttp2_session*, uint8_t, int32_t id, const uint8_t* data, size_t length,
                       void* self) {
        static_cast<Client*>(self)->responses[id].body.append(reinterpret_cast<const char*>(data),
                                                              length);
        return 0;
    }
    static int on_frame(nghttp2_session*, const nghttp2_frame* frame, void* self) {
        auto& client = *static_cast<Client*>(self);
        bool ack = frame->hd.flags & NGHTTP2_FLAG_ACK;
        switch (frame->hd.type) {
        case NGHTTP2_GOAWAY:
            client.goaway_code = frame->goaway.error_code;
            client.goaway_last_stream = frame->goaway.last_stream_id;
            break;
        case NGHTTP2_RST_STREAM:
            client.responses[frame->hd.stream_id].reset = frame->rst_stream.error_code;
            break;
        case NGHTTP2_PING:
            client.ping_acks += ack;
            break;
        case NGHTTP2_SETTINGS:
            if (!ack) client.server_settings_received = true;
            break;
        default:
            break;
        }
        return 0;
    }
    static ssize_t read_body(nghttp2_session*, int32_t id, uint8_t*, size_t, uint32_t* flags,
                             nghttp2_data_source* source, void*) {
        if (!static_cast<Client*>(source->ptr)->bodies_ended_.count(id))
            return NGHTTP2_ERR_DEFERRED;
        *flags |= NGHTTP2_DATA_FLAG_EOF;
        return 0;
    }

    nghttp2_session* session_ = nullptr;
    std::set<int32_t> bodies_ended_;
};

// RFC 7541 6.2.2, a literal field never indexed, short name and value.
std::string hpack_literal(const std::string& name, const std::string& value) {
    return std::string(1, '\x10') + static_cast<char>(name.size()) + name +
           static_cast<char>(value.size()) + value;
}

// A HEADERS frame (END_HEADERS, END_STREAM) made by hand, on any stream id.
std::string headers_frame(uint32_t stream, const Fields& fields) {
    std::string block;
    for (const auto& [name, value] : fields) block += hpack_literal(name, value);
    std::string frame = {0, static_cast<char>(block.size() >> 8), static_cast<char>(block.size()),
                         NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS | NGHTTP2_FLAG_END_STREAM};
    for (int shift : {24, 16, 8, 0}) frame += static_cast<char>(stream >> shift);
    return frame + block;
}

// RFC 9113 6.5.2: a header list's size, 32 bytes of overhead per field.
uint64_t list_size(const Fields& fields) {
    uint64_t size = 0;
    for (const auto& [name, value] : fields) size += name.size() + value.size() + 32;
    return size;
}

// ---- the two ends together ----------------------------------------------------

class Connection {
public:
    explicit Connection(const Limits& limits = {}) : worker_(make_worker(limits)) {
        session_ = std::make_unique<http2::Session>(*worker_->server, transport);
        transport.attach(*session_);
    }
    ~Connection() {
        if (!transport.ended) session_->connection_closed();
        worker_->server->poller.turn(0);
        session_.reset();
    }
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    // What the client made so far reaches the server in one read; the
    // session writes what it caused at once.
    void client_sends() { send_raw(client.output()); }
    void send_raw(const std::string& bytes) {
        if (!bytes.empty() && !transport.ended) session_->receive(bytes.data(), bytes.size());
    }
    // The client reads everything written, the session hearing of
    // writability while its output was blocked.
    void client_reads() {
        for (int round = 0; round < 1000; ++round) {
            client.input(transport.read_client_end());
            if (transport.ended || !transport.blocked) return;
            session_->on_writable();
        }
        FAIL("the session's output never drained");
    }
    // Back and forth until the client has nothing more to say.
    void exchange() {
        for (int round = 0; round < 100; ++round) {
            std::string bytes = client.output();
            if (bytes.empty()) return;
            send_raw(bytes);
            client_reads();
        }
        FAIL("the client never went quiet");
    }
    metrics::Snapshot counters() const { return worker_->worker->snapshot(); }
    // The worker drains: GOAWAY NO_ERROR naming the last stream taken.
    void drain() { session_->drain(); }

    Client client;
    PairTransport transport;

private:
    std::unique_ptr<Worker> worker_;
    std::unique_ptr<http2::Session> session_;
};

}  // namespace

TEST_CASE(
    "http2 session: SETTINGS advertise max_concurrent_streams, streams past it are refused "
    "(REFUSED_STREAM) while the others are served",
    "[http2]") {
    Connection connection({.max_concurrent_streams = 4});
    Client& client = connection.client;
    // Five streams with the preface, before the client knows the limit:
    // each holds its request body, so all stay open.
    std::vector<int32_t> held;
    for (int i = 0; i < 4; ++i)
        held.push_back(client.request(Client::get_fields("/hello", "POST"), true));
    int32_t extra = client.request(Client::get_fields("/hello", "POST"), true);
    connection.client_sends();
    connection.client_reads();

    REQUIRE(client.server_settings_received);
    CHECK(client.server_setting(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS) == 4);
    // RFC 9113 5.1.2: a stream error, not the connection's end.
    CHECK(client.responses[extra].reset == NGHTTP2_REFUSED_STREAM);
    CHECK(client.goaway_code == none);
    CHECK_FALSE(connection.transport.ended);
    for (int32_t id : held) {
        INFO("stream " << id);
        CHECK(client.responses[id].reset == none);
        CHECK(client.responses[id].status == 0);  // its body is not in yet
    }
    CHECK(connection.counters().http2.streams == 4);  // the refused one never became a stream

    // The four bodies end: each is served.
    for (int32_t id : held) client.end_body(id);
    connection.exchange();
    for (int32_t id : held) {
        INFO("stream " << id);
        CHECK(client.responses[id].status == 200);
        CHECK(client.responses[id].body == "hello\n");
    }
    // They are closed: a new stream is taken.
    int32_t after = client.get("/hello");
    connection.exchange();
    CHECK(client.responses[after].status == 200);
    CHECK(client.responses[after].reset == none);
    CHECK(client.goaway_code == none);
}

TEST_CASE(
    "http2 session: streams opened and reset past the rapid-reset budget get GOAWAY "
    "ENHANCE_YOUR_CALM, and no stream after it is started",
    "[http2]") {
    // Each stream is opened and reset before the server wrote a byte, all
    // in one read: the loop's clock stands still, so nothing refills the
    // budget. `answered`: a GET its handler answers at once; else a POST
    // whose body never comes, so its handler never starts.
    auto open_and_reset = [](Connection& connection, int streams, bool answered = true) {
        std::string bytes;
        for (int i = 0; i < streams; ++i) {
            int32_t id =
                answered ? connection.client.get("/hello")
                         : connection.client.request(Client::get_fields("/hello", "POST"), true);
            bytes += connection.client.output();  // the HEADERS out before its reset
            connection.client.reset(id);
            bytes += connection.client.output();
        }
        return bytes;
    };
    Connection connection;
    Client& client = connection.client;
    SECTION("the whole burst, then a request: served") {
        std::string bytes = open_and_reset(connection, reset_burst);
        int32_t after = client.get("/hello");
        connection.send_raw(bytes + client.output());
        connection.client_reads();
        CHECK(client.goaway_code == none);
        CHECK(client.responses[after].status == 200);
        CHECK(connection.counters().http2.streams == reset_burst + 1);
    }
    SECTION("one reset past the burst: GOAWAY, and the request after it is never started") {
        bool answered = true;
        SECTION("streams answered before their reset") {}
        SECTION("streams reset before their handler started") {
            answered = false;
        }
        std::string bytes = open_and_reset(connection, reset_burst + 1, answered);
        int32_t last_reset = 2 * (reset_burst + 1) - 1;
        int32_t after = client.get("/hello");
        connection.send_raw(bytes + client.output());
        connection.client_reads();
        CHECK(client.goaway_code == NGHTTP2_ENHANCE_YOUR_CALM);
        // RFC 9113 6.8: nothing above the GOAWAY's last stream was acted on.
        CHECK(client.goaway_last_stream == last_reset);
        CHECK(client.responses[after].status == 0);
        CHECK(connection.counters().http2.streams == reset_burst + 1);
        CHECK(connection.transport.ended);
    }
}

TEST_CASE(
    "http2 session: streams refused past max_concurrent_streams draw on the rapid-reset budget",
    "[http2]") {
    // One stream holds the only place; the others come in the same read,
    // before the client knows the limit (it would hold them back after).
    Connection connection({.max_concurrent_streams = 1});
    Client& client = connection.client;
    int32_t holder = client.request(Client::get_fields("/hello", "POST"), true);
    std::vector<int32_t> refused;
    SECTION("as many refusals as the burst: each stream refused, the holder served") {
        for (int i = 0; i < reset_burst; ++i) refused.push_back(client.get("/hello"));
        connection.client_sends();
        connection.client_reads();
        CHECK(client.goaway_code == none);
        for (int32_t id : refused) CHECK(client.responses[id].reset == NGHTTP2_REFUSED_STREAM);
        client.end_body(holder);
        connection.exchange();
        CHECK(client.responses[holder].status == 200);
        CHECK(client.goaway_code == none);
    }
    SECTION("one more: GOAWAY") {
        for (int i = 0; i < reset_burst + 1; ++i) refused.push_back(client.get("/hello"));
        connection.client_sends();
        connection.client_reads();
        CHECK(client.goaway_code == NGHTTP2_ENHANCE_YOUR_CALM);
        CHECK(connection.transport.ended);
    }
}

TEST_CASE(
    "http2 session: HEADERS on a stream id used before, or lower than one used, get GOAWAY "
    "PROTOCOL_ERROR",
    "[http2]") {
    Connection connection;
    Client& client = connection.client;
    SECTION("the id of a stream served and closed") {
        int32_t id = client.get("/hello");
        connection.exchange();
        REQUIRE(client.responses[id].status == 200);
        connection.send_raw(headers_frame(static_cast<uint32_t>(id), Client::get_fields("/hello")));
    }
    SECTION("an id never used, below one that was") {
        client.skip_to_stream(5);
        int32_t id = client.get("/hello");
        connection.exchange();
        REQUIRE(client.responses[id].status == 200);
        connection.send_raw(headers_frame(3, Client::get_fields("/hello")));
    }
    connection.client_reads();
    CHECK(client.goaway_code == NGHTTP2_PROTOCOL_ERROR);
    CHECK(connection.transport.ended);
}

TEST_CASE(
    "http2 session: PING or SETTINGS frames up to the limit in a second are answered, one "
    "more gets GOAWAY ENHANCE_YOUR_CALM and the session ends",
    "[http2]") {
    Connection connection;
    Client& client = connection.client;
    bool pings = false;
    SECTION("PING") {
        pings = true;
    }
    SECTION("SETTINGS") {
        pings = false;
    }
    auto control_frame = [&] { pings ? client.ping() : client.settings(); };
    // The preface's SETTINGS counts too: it and limit - 1 more.
    for (int i = 1; i < control_frames_per_second; ++i) control_frame();
    connection.client_sends();
    connection.client_reads();
    CHECK(client.goaway_code == none);
    if (pings) CHECK(client.ping_acks == control_frames_per_second - 1);
    control_frame();
    connection.client_sends();
    connection.client_reads();
    CHECK(client.goaway_code == NGHTTP2_ENHANCE_YOUR_CALM);
    CHECK(connection.transport.ended);
}

TEST_CASE(
    "http2 session: a header list of max_header_bytes is served, one byte more or a block "
    "that HPACK-expands past it gets GOAWAY ENHANCE_YOUR_CALM",
    "[http2]") {
    constexpr uint64_t limit = 1024;
    Connection connection({.max_header_bytes = limit});
    Client& client = connection.client;
    connection.exchange();  // SETTINGS both ways
    CHECK(client.server_setting(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE) == limit);
    // A GET for /hello with a field that brings the list to `size`.
    auto padded = [](uint64_t size) {
        Fields fields = Client::get_fields("/hello");
        fields.emplace_back("x-pad", "");
        fields.back().second.assign(size - list_size(fields), 'p');
        return fields;
    };
    // The session ends, the stream never served.
    auto expect_refused = [&](int32_t id) {
        connection.client_reads();
        CHECK(client.goaway_code == NGHTTP2_ENHANCE_YOUR_CALM);
        CHECK(client.responses[id].status == 0);
        CHECK(connection.transport.ended);
    };
    SECTION("exactly max_header_bytes: served") {
        int32_t id = client.request(padded(limit));
        connection.exchange();
        CHECK(client.responses[id].status == 200);
        CHECK(client.goaway_code == none);
        CHECK_FALSE(connection.transport.ended);
    }
    SECTION("one byte over: refused") {
        int32_t id = client.request(padded(limit + 1));
        connection.client_sends();
        expect_refused(id);
    }
    SECTION("a small block that expands past it: a field, then references to it") {
        Fields bomb = Client::get_fields("/hello");
        for (int i = 0; i < 10; ++i) bomb.emplace_back("x-bomb", std::string(100, 'b'));
        REQUIRE(list_size(bomb) > limit);
        int32_t id = client.request(bomb);
        std::string bytes = client.output();
        CHECK(bytes.size() < limit / 4);  // nghttp2's encoder indexed the field
        connection.send_raw(bytes);
        expect_refused(id);
    }
}

TEST_CASE(
    "http2 session: after a drain's GOAWAY, DATA on a stream it refused is ignored, and the "
    "streams it kept are served",
    "[http2]") {
    Connection connection;
    Client& client = connection.client;
    int32_t kept = client.request(Client::get_fields("/hello", "POST"), true);
    connection.exchange();
    connection.drain();
    // The client has not read the GOAWAY yet: it opens another stream and
    // sends that request's body, which the server must drop, not take as
    // DATA on a closed stream (RFC 9113 6.8).
    int32_t refused = client.request(Client::get_fields("/hello", "POST"), true);
    connection.client_sends();
    client.end_body(refused);
    connection.client_sends();
    CHECK_FALSE(connection.transport.ended);
    client.end_body(kept);
    connection.exchange();
    CHECK(client.goaway_code == NGHTTP2_NO_ERROR);
    CHECK(client.goaway_last_stream == kept);
    CHECK(client.responses[kept].status == 200);
    CHECK(client.responses[refused].status == 0);
}
