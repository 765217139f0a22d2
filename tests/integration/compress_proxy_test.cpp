// compress = true on a proxy location, on the real binary with a real
// upstream: every compressed body is decoded here (zlib, libbrotli, libzstd)
// and compared with what the upstream sent; each response that must not be
// compressed arrives byte for byte; heads get Vary, a weak ETag and no
// length; a stream stays live; a slow reader is served in bounded memory.
#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

#include "content_decoder.hpp"
#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

namespace {

// JSON-like text: compressible, and different all along (a lost or repeated
// block shows).
std::string json_text(size_t size) {
    std::string text = "[";
    for (unsigned i = 0; text.size() < size; ++i)
        text += "{\"id\":" + std::to_string(i) + ",\"name\":\"user " + std::to_string(i * 7919 % 100003) +
                "\",\"active\":" + (i % 3 ? "true" : "false") + "},\n";
    text.resize(size);
    return text;
}

std::string compress_config(const UpstreamServer& upstream, const std::string& compress = "true",
                            const std::string& server_options = "") {
    return proxy_config({upstream.address()}, "", "compress = " + compress + "\n", server_options);
}

}  // namespace

TEST_CASE("compress: a proxied response is compressed in the coding the client prefers", "[compress]") {
    const std::string body = json_text(100 * 1024);
    UpstreamServer upstream([&](const ReceivedRequest& request) {
        if (request.target == "/chunked")
            return Reply::chunked({body.substr(0, 30000), body.substr(30000)}, 0ms,
                                  "ETag: \"v1\"\r\n");
        return Reply::raw("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nETag: \"v1\"\r\n"
                          "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body,
                          Reply::Then::keep_alive);
    });
    Portico portico(compress_config(upstream));
    struct Case {
        const char* accept;
        const char* coding;
    };
    for (const char* target : {"/length", "/chunked"}) {
        for (Case c : {Case{"gzip, deflate, br, zstd", "br"}, Case{"gzip, zstd", "zstd"},
                       Case{"gzip", "gzip"}, Case{"x-gzip", "gzip"}, Case{"br;q=0.5, gzip", "gzip"},
                       Case{"*", "br"}}) {
            INFO(target << " with Accept-Encoding: " << c.accept);
            Client client(portico.port());
            ResponseReader reader(client.fd());
            client.send(get_request(target, std::string("Accept-Encoding: ") + c.accept + "\r\n"));
            auto response = reader.read(10s);
            REQUIRE(response);
            CHECK(response->status == 200);
            CHECK(response->header("content-encoding") == c.coding);
            CHECK(response->header("content-length").empty());
            CHECK(reader.framing() == "chunked");
            CHECK(response->header("vary") == "Accept-Encoding");
            CHECK(response->header("etag") == "W/\"v1\"");
            CHECK(response->header("content-type") ==
                  (std::string(target) == "/chunked" ? "text/plain" : "application/json"));
            CHECK(response->body.size() < body.size() / 4);
            bool decoded_whole = decode_body(c.coding, response->body) == body;
            CHECK(decoded_whole);
        }
    }
}

// The window a br stream declares in its first bits (RFC 7932 9.1, WBITS).
static int brotli_window_bits(const std::string& stream) {
    if (stream.size() < 2) return -1;
    unsigned bits = static_cast<unsigned char>(stream[0]) | static_cast<unsigned char>(stream[1]) << 8;
    if ((bits & 1) == 0) return 16;
    if (unsigned n = (bits >> 1) & 7; n != 0) return 17 + static_cast<int>(n);
    unsigned m = (bits >> 4) & 7;
    return m == 0 ? 17 : m == 1 ? -1 : 8 + static_cast<int>(m);
}

// The window a zstd frame declares (RFC 8878 3.1.1.1): -1 for a
// single-segment frame, whose window is its pledged content size.
static int zstd_window_log(const std::string& frame) {
    if (frame.size() < 6) return -2;
    auto descriptor = static_cast<unsigned char>(frame[4]);
    if (descriptor & 0x20) return -1;
    return 10 + (static_cast<unsigned char>(frame[5]) >> 3);
}

TEST_CASE("compress: br's window fits a proxied response's length, up to 512 KiB, 64 KiB for a stream of "
          "unknown length or from quality 7",
          "[compress]") {
    // As nginx's brotli filter: at quality 6, a 100 KiB JSON gets 128 KiB,
    // not 64 KiB (fewer instructions); a long one no more than 512 KiB.
    UpstreamServer upstream([&](const ReceivedRequest& request) {
        size_t size = request.target == "/2k" ? 2000 : request.target == "/4m" ? 4 << 20 : 100 * 1024;
        std::string body = json_text(size);
        if (request.target == "/chunked") return Reply::chunked({body.substr(0, 30000), body.substr(30000)}, 0ms);
        return Reply::raw("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body,
                          Reply::Then::keep_alive);
    });
    Portico portico(compress_config(upstream, "{ brotli_level = 6 }"));
    struct Case {
        const char* target;
        size_t size;
        int window_bits;
    };
    for (Case c : {Case{"/100k", 100 * 1024, 17}, Case{"/chunked", 100 * 1024, 16}, Case{"/2k", 2000, 11},
                   Case{"/4m", 4 << 20, 19}}) {
        INFO(c.target);
        auto response = fetch_encoded(portico.port(), c.target, "br");
        REQUIRE(response);
        REQUIRE(response->header("content-encoding") == "br");
        CHECK(brotli_window_bits(response->body) == c.window_bits);
        bool decoded_whole = decode_body("br", response->body) == json_text(c.size);
        CHECK(decoded_whole);
    }
    // zstd does not pledge a stream's Content-Length (an upstream that sent
    // less would fail the stream): its streamed 256 KiB window.
    auto zstd = fetch_encoded(portico.port(), "/100k", "zstd");
    REQUIRE(zstd);
    REQUIRE(zstd->header("content-encoding") == "zstd");
    CHECK(zstd_window_log(zstd->body) == 18);
    bool zstd_decoded = decode_body("zstd", zstd->body) == json_text(100 * 1024);
    CHECK(zstd_decoded);
    // From quality 7 a larger window would take 9 to 33 MiB of tables per stream.
    Portico level_9(compress_config(upstream, "{ brotli_level = 9 }"));
    auto response = fetch_encoded(level_9.port(), "/100k", "br");
    REQUIRE(response);
    REQUIRE(response->header("content-encoding") == "br");
    CHECK(brotli_window_bits(response->body) == 16);
}

TEST_CASE("compress: responses that are never compressed arrive byte for byte", "[compress]") {
    const std::string text = json_text(20 * 1024);
    const std::string gzipped = "\x1f\x8b pretend this is gzip " + text;
    UpstreamServer upstream([&](const ReceivedRequest& request) {
        auto head = [&](int status, const std::string& type, const std::string& extra, size_t length) {
            return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: " + type + "\r\n" +
                   extra + "Content-Length: " + std::to_string(length) + "\r\n\r\n";
        };
        const std::string& t = request.target;
        std::string bytes;
        if (t == "/encoded") bytes = head(200, "text/plain", "Content-Encoding: gzip\r\n", gzipped.size()) + gzipped;
        else if (t == "/no-transform") bytes = head(200, "text/plain", "Cache-Control: public, no-transform\r\n", text.size()) + text;
        else if (t == "/partial") bytes = head(206, "text/plain", "Content-Range: bytes 0-99/20480\r\n", 100) + text.substr(0, 100);
        else if (t == "/not-modified") bytes = "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\n\r\n";
        else if (t == "/no-content") bytes = "HTTP/1.1 204 No Content\r\n\r\n";
        else if (t == "/short") bytes = head(200, "text/plain", "", 255) + text.substr(0, 255);
        else if (t == "/image") bytes = head(200, "image/png", "", text.size()) + text;
        else if (t == "/binary") bytes = head(200, "application/octet-stream", "", text.size()) + text;
        else if (t == "/untyped") bytes = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(text.size()) + "\r\n\r\n" + text;
        else bytes = head(200, "text/plain", "ETag: \"v1\"\r\n", text.size()) + text;  // /range, /head
        return Reply::raw(bytes, Reply::Then::keep_alive);
    });
    Portico portico(compress_config(upstream));
    const std::string accept = "gzip, deflate, br, zstd";

    SECTION("an upstream's own Content-Encoding is left alone, Vary and all") {
        auto response = fetch_encoded(portico.port(), "/encoded", accept);
        REQUIRE(response);
        CHECK(response->header("content-encoding") == "gzip");
        CHECK(response->header("content-length") == std::to_string(gzipped.size()));
        CHECK(response->header("vary").empty());
        CHECK(response->body == gzipped);
    }
    struct Case {
        const char* target;
        int status;
        size_t length;
    };
    SECTION("no-transform, 206, 304, 204, below min_length, other types, no type") {
        for (Case c : {Case{"/no-transform", 200, text.size()}, Case{"/partial", 206, 100},
                       Case{"/not-modified", 304, 0}, Case{"/no-content", 204, 0},
                       Case{"/short", 200, 255}, Case{"/image", 200, text.size()},
                       Case{"/binary", 200, text.size()}, Case{"/untyped", 200, text.size()}}) {
            INFO(c.target);
            auto response = fetch_encoded(portico.port(), c.target, accept);
            REQUIRE(response);
            CHECK(response->status == c.status);
            CHECK(response->header("content-encoding").empty());
            CHECK(response->header("vary").empty());  // it is the same for every client
            CHECK(response->body == text.substr(0, c.length));
            if (c.status == 200) CHECK(response->header("content-length") == std::to_string(c.length));
        }
    }
    SECTION("a request with Range gets the identity's bytes (and its strong ETag)") {
        auto response = fetch_encoded(portico.port(), "/range", accept, "Range: bytes=0-99\r\n");
        REQUIRE(response);
        CHECK(response->header("content-encoding").empty());
        CHECK(response->header("etag") == "\"v1\"");
        CHECK(response->body == text);  // the upstream answered it whole
    }
    SECTION("HEAD: the identity's head, its length included") {
        auto response = proxy_fetch(portico.port(), "HEAD /head HTTP/1.1\r\nHost: x\r\nAccept-Encoding: " + accept + "\r\n\r\n");
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->header("content-encoding").empty());
        CHECK(response->header("content-length") == std::to_string(text.size()));
    }
}

TEST_CASE("compress: min_length and types come from the location's table", "[compress]") {
    UpstreamServer upstream([](const ReceivedRequest& request) {
        std::string body = json_text(request.target == "/small" ? 1000 : 5000);
        std::string type = request.target == "/csv" ? "text/csv" : "application/x-ndjson";
        return Reply::raw("HTTP/1.1 200 OK\r\nContent-Type: " + type + "\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body,
                          Reply::Then::keep_alive);
    });
    Portico portico(compress_config(upstream, "{ types = [\"application/x-ndjson\"], min_length = 2000 }"));
    auto small = fetch_encoded(portico.port(), "/small", "gzip");
    auto large = fetch_encoded(portico.port(), "/large", "gzip");
    auto csv = fetch_encoded(portico.port(), "/csv", "gzip");
    REQUIRE(small);
    REQUIRE(large);
    REQUIRE(csv);
    CHECK(small->header("content-encoding").empty());
    CHECK(large->header("content-encoding") == "gzip");
    CHECK(decode_body("gzip", large->body) == json_text(5000));
    CHECK(csv->header("content-encoding").empty());  // text/* is no longer listed
}

TEST_CASE("compress: the client's q-values decide, and a refusal is honoured", "[compress]") {
    const std::string body = json_text(10 * 1024);
    UpstreamServer upstream([&](const ReceivedRequest&) {
        return Reply::text(200, body, "ETag: \"v7\"\r\n");
    });
    Portico portico(compress_config(upstream));
    struct Case {
        const char* accept;
        const char* coding;  // "" for the identity
    };
    for (Case c : {Case{"gzip;q=0", ""}, Case{"*;q=0", ""}, Case{"identity;q=0", ""},
                   Case{"br;q=0, zstd;q=0, gzip", "gzip"}, Case{"*, br;q=0", "zstd"},
                   Case{"gzip;q=0.2, zstd;q=0.9, br;q=0.5", "zstd"}, Case{"identity, gzip;q=0.5", ""},
                   Case{"deflate, compress", ""}, Case{"", ""}}) {
        INFO("Accept-Encoding: " << c.accept);
        auto response = fetch_encoded(portico.port(), "/", c.accept);
        REQUIRE(response);
        CHECK(response->header("content-encoding") == c.coding);
        // Compressible either way: caches must keep the representations apart.
        CHECK(response->header("vary") == "Accept-Encoding");
        if (std::string(c.coding).empty()) {
            CHECK(response->body == body);
            CHECK(response->header("etag") == "\"v7\"");
            CHECK(response->header("content-length") == std::to_string(body.size()));
        } else {
            CHECK(decode_body(c.coding, response->body) == body);
            CHECK(response->header("etag") == "W/\"v7\"");
        }
    }
}

TEST_CASE("compress: Vary is merged with the upstream's, ETags made weak once", "[compress]") {
    const std::string body = json_text(4096);
    UpstreamServer upstream([&](const ReceivedRequest& request) {
        std::string extra;
        if (request.target == "/cookie") extra = "Vary: Cookie\r\nETag: W/\"weak\"\r\n";
        if (request.target == "/already") extra = "Vary: accept-encoding, Origin\r\n";
        if (request.target == "/star") extra = "Vary: *\r\n";
        return Reply::text(200, body, extra);
    });
    Portico portico(compress_config(upstream));
    auto cookie = fetch_encoded(portico.port(), "/cookie", "br");
    auto already = fetch_encoded(portico.port(), "/already", "br");
    auto star = fetch_encoded(portico.port(), "/star", "br");
    auto identity = fetch_encoded(portico.port(), "/cookie", "");
    REQUIRE(cookie);
    REQUIRE(already);
    REQUIRE(star);
    REQUIRE(identity);
    CHECK(cookie->header("vary") == "Cookie, Accept-Encoding");
    CHECK(cookie->header("etag") == "W/\"weak\"");
    CHECK(already->header("vary") == "accept-encoding, Origin");
    CHECK(star->header("vary") == "*");
    CHECK(identity->header("vary") == "Cookie, Accept-Encoding");
    CHECK(identity->header("etag") == "W/\"weak\"");
    for (const auto* response : {&*cookie, &*already, &*star})
        CHECK(decode_body("br", response->body) == body);
}

namespace {

// Feeds the data of the complete chunks buffered after `parsed` to
// `decoder`, reading more as it comes, until the decoded bytes hold `text`.
bool decode_chunks_until(ResponseReader& reader, size_t& parsed, ContentDecoder& decoder,
                         std::string_view text, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const std::string& buffer = reader.buffered();
        size_t line_end;
        while ((line_end = buffer.find("\r\n", parsed)) != std::string::npos) {
            size_t size = std::stoul(buffer.substr(parsed, line_end - parsed), nullptr, 16);
            if (buffer.size() < line_end + 2 + size + 2) break;
            if (!decoder.feed(std::string_view(buffer).substr(line_end + 2, size))) return false;
            parsed = line_end + 2 + size + 2;
        }
        if (decoder.output().find(text) != std::string::npos) return true;
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0 || !reader.read_at_least(buffer.size() + 1, left)) return false;
    }
}

}  // namespace

TEST_CASE("compress: server-sent events stay live through a compressing location", "[compress]") {
    // Each event must be decodable as soon as it is sent: the upstream holds
    // the second one back for 1.5 s.
    UpstreamServer upstream([](const ReceivedRequest&) {
        Reply reply;
        reply.send("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                   "Transfer-Encoding: chunked\r\n\r\n13\r\ndata: first event\n\n\r\n");
        reply.pause(1500ms);
        reply.send("14\r\ndata: second event\n\n\r\n0\r\n\r\n");
        return reply;
    });
    Portico portico(compress_config(upstream));
    for (const char* coding : {"br", "zstd", "gzip"}) {
        INFO(coding);
        Client client(portico.port());
        ResponseReader reader(client.fd());
        auto start = std::chrono::steady_clock::now();
        client.send(get_request("/events", std::string("Accept-Encoding: ") + coding + "\r\n"));
        auto head = reader.read_head(2s);
        REQUIRE(head);
        REQUIRE(head->header("content-encoding") == coding);
        ContentDecoder decoder(coding);
        size_t parsed = 0;
        REQUIRE(decode_chunks_until(reader, parsed, decoder, "data: first event\n\n", 2s));
        auto first_at = ms_since(start);
        CHECK(first_at < 1400);  // before the upstream sent the second (1.5 s)
        CHECK(decoder.output() == "data: first event\n\n");
        REQUIRE(decode_chunks_until(reader, parsed, decoder, "second event", 4s));
        CHECK(ms_since(start) >= 1400);
        CHECK(decoder.output() == "data: first event\n\ndata: second event\n\n");
        REQUIRE(reader.read_until("0\r\n\r\n", 3s));  // the last-chunk follows the stream's end
        REQUIRE(decode_chunks_until(reader, parsed, decoder, "second event", 1s));
        CHECK(decoder.finished());
    }
}

TEST_CASE("compress: data that fills the proxy's read blocks exactly, then pauses, is flushed before the pause",
          "[compress]") {
    // A read that fills portico's 64 KiB block tells the compression filter
    // that more follows at once, so it does not flush; when the next read
    // finds nothing (or the loop stops after 4 blocks), the flush must still
    // come before portico waits. The upstream writes its head and the body's
    // first part as exactly 1 or 5 blocks, then holds the rest back.
    constexpr size_t block = 64 * 1024;
    const std::string marker = "<end of the first part>";
    const std::string rest = json_text(2000);
    auto head_for = [&](size_t body_size) {
        return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
               std::to_string(body_size) + "\r\n\r\n";
    };
    // The body's first part, so that the head and it are `blocks` blocks.
    auto first_part_of = [&](size_t blocks) {
        size_t head_size = head_for(blocks * block + rest.size()).size();  // the same digits
        return json_text(blocks * block - head_size - marker.size()) + marker;
    };
    for (size_t blocks : {1, 5}) {
        std::string first = first_part_of(blocks);
        REQUIRE(head_for(first.size() + rest.size()).size() + first.size() == blocks * block);
    }
    UpstreamServer upstream([&](const ReceivedRequest& request) {
        std::string first = first_part_of(request.target == "/blocks/5" ? 5 : 1);
        Reply reply;
        reply.send(head_for(first.size() + rest.size()) + first);
        reply.pause(1200ms);
        reply.send(rest);
        return reply;
    });
    Portico portico(compress_config(upstream));
    for (size_t blocks : {1, 5}) {
        for (const char* coding : {"br", "zstd", "gzip"}) {
            INFO(blocks << " blocks, " << coding);
            Client client(portico.port());
            ResponseReader reader(client.fd());
            auto start = std::chrono::steady_clock::now();
            client.send(get_request("/blocks/" + std::to_string(blocks),
                                    std::string("Accept-Encoding: ") + coding + "\r\n"));
            auto head = reader.read_head(2s);
            REQUIRE(head);
            REQUIRE(head->header("content-encoding") == coding);
            ContentDecoder decoder(coding);
            size_t parsed = 0;
            REQUIRE(decode_chunks_until(reader, parsed, decoder, marker, 3s));
            CHECK(ms_since(start) < 1100);  // before the upstream sent the rest (1.2 s)
            const std::string first = first_part_of(blocks);
            CHECK(decoder.output() == first);
            REQUIRE(reader.read_until("0\r\n\r\n", 4s));
            REQUIRE(decode_chunks_until(reader, parsed, decoder, rest.substr(rest.size() - 20), 1s));
            CHECK(decoder.output() == first + rest);
            CHECK(decoder.finished());
        }
    }
}

TEST_CASE("compress: an HTTP/1.0 client gets the stream ended by the close", "[compress]") {
    const std::string body = json_text(50 * 1024);
    UpstreamServer upstream([&](const ReceivedRequest&) { return Reply::text(200, body); });
    Portico portico(compress_config(upstream));
    Client client(portico.port());
    client.send("GET /old HTTP/1.0\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n");
    ResponseReader reader(client.fd());
    auto response = reader.read(10s);
    REQUIRE(response);
    CHECK(reader.framing() == "close");
    CHECK(response->header("content-encoding") == "gzip");
    CHECK(response->header("transfer-encoding").empty());
    CHECK(decode_body("gzip", response->body) == body);
}

TEST_CASE("compress: keep-alive goes on after compressed and plain responses alike", "[compress]") {
    UpstreamServer upstream([](const ReceivedRequest& request) {
        if (request.target == "/image")
            return Reply::raw("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 5\r\n\r\nimage",
                              Reply::Then::keep_alive);
        return Reply::text(200, json_text(3000 + request.target.size()));
    });
    Portico portico(compress_config(upstream));
    Client client(portico.port());
    ResponseReader reader(client.fd());
    // Pipelined, then one at a time.
    client.send(get_request("/a", "Accept-Encoding: br\r\n") + get_request("/image", "Accept-Encoding: br\r\n") +
                get_request("/bbb", "Accept-Encoding: gzip\r\n"));
    auto a = reader.read();
    auto image = reader.read();
    auto b = reader.read();
    REQUIRE(a);
    REQUIRE(image);
    REQUIRE(b);
    CHECK(decode_body("br", a->body) == json_text(3002));
    CHECK(image->body == "image");
    CHECK(decode_body("gzip", b->body) == json_text(3004));
    client.send(get_request("/cc", "Accept-Encoding: zstd\r\n"));
    auto c = reader.read();
    REQUIRE(c);
    CHECK(decode_body("zstd", c->body) == json_text(3003));
}

TEST_CASE("compress: a slow reader of a large compressed stream gets it whole, in bounded memory",
          "[compress]") {
    // Text that compresses little (random words), so the compressed stream
    // is large; the client reads slowly through a small receive buffer.
    std::string body;
    uint32_t state = 7;
    while (body.size() < 16 * 1024 * 1024) {
        state = state * 1103515245 + 12345;
        body += std::to_string(state) + (state % 7 ? " " : "\n");
    }
    UpstreamServer upstream([&](const ReceivedRequest& request) {
        return Reply::text(200, request.target == "/warm" ? json_text(300 * 1024) : body);
    });
    Portico portico(compress_config(upstream, "{ gzip_level = 1 }"));
    pid_t worker = portico.worker_pids().at(0);
    // A compressed stream first: the pools, the encoder's allocations and
    // the libraries' pages are then part of the baseline.
    auto warm = fetch_encoded(portico.port(), "/warm", "gzip");
    REQUIRE(warm);
    REQUIRE(warm->header("content-encoding") == "gzip");
    long rss_before = resident_kib(worker);
    Client client(portico.port(), 16 * 1024);
    client.send(get_request("/big", "Accept-Encoding: gzip\r\n"));
    ResponseReader reader(client.fd());
    auto head = reader.read_head(5s);
    REQUIRE(head);
    REQUIRE(head->header("content-encoding") == "gzip");
    // Read slowly at first: the worker must stop reading its upstream.
    std::this_thread::sleep_for(1s);
    long rss_stalled = resident_kib(worker);
    auto compressed = reader.read_body(*head, 30s);
    REQUIRE(compressed);
    bool decoded_whole = decode_body("gzip", *compressed) == body;
    CHECK(decoded_whole);
    INFO("worker RSS before " << rss_before << " KiB, while the client stalled " << rss_stalled << " KiB");
    // The body is 16 MiB, about 7 MiB compressed: holding either would
    // show. A stream holds a 64 KiB block, zlib's 256 KiB, and the proxy's
    // 64 KiB read buffer.
    CHECK(rss_stalled - rss_before < 2 * 1024);
}

// One upstream read holding a large chunk, then many small ones (the
// proxy hands them on 16 at a time, the last group with the response's
// end), for a client that waits before reading: every coding decodes to
// the bytes sent, the connection goes on with the next request, and a
// client gone before reading leaves the worker serving. (The case the
// filter guards against, the proxy ending while compressed output is
// still pending, needs the socket full in the middle of one read; on
// loopback it takes more than one 64 KiB read, so this test does not
// reach it every time.)
TEST_CASE("compress: many small chunks after a large one in one read, then the next request",
          "[compress]") {
    std::string big(60000, '\0');
    uint32_t state = 11;
    for (char& byte : big) {  // incompressible: the compressed chunk stays large
        state = state * 1103515245 + 12345;
        byte = static_cast<char>(state >> 24);
    }
    std::string body = big, chunked = "ea60\r\n" + big + "\r\n";
    for (int i = 0; i < 40; ++i) {
        std::string piece = "piece " + std::to_string(100 + i) + "\n";  // 10 bytes
        body += piece;
        chunked += "a\r\n" + piece + "\r\n";
    }
    chunked += "0\r\n\r\n";
    UpstreamServer upstream([&](const ReceivedRequest& request) {
        if (request.target == "/next") return Reply::text(200, json_text(3000));
        return Reply::raw("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                          "Transfer-Encoding: chunked\r\n\r\n" + chunked,
                          Reply::Then::keep_alive);
    });
    Portico portico(compress_config(upstream, "{ gzip_level = 1, brotli_level = 1, zstd_level = 1 }"));
    for (const char* coding : {"br", "zstd", "gzip"}) {
        INFO(coding);
        const std::string accept = std::string("Accept-Encoding: ") + coding + "\r\n";
        for (int round = 0; round < 3; ++round) {
            Client client(portico.port(), 4 * 1024);
            client.send(get_request("/pieces", accept));
            std::this_thread::sleep_for(300ms);  // not reading: the socket fills
            ResponseReader reader(client.fd());
            auto response = reader.read(10s);
            REQUIRE(response);
            REQUIRE(response->header("content-encoding") == coding);
            CHECK(decode_body(coding, response->body) == body);
            client.send(get_request("/next", accept));
            auto next = reader.read(10s);
            REQUIRE(next);
            CHECK(decode_body(coding, next->body) == json_text(3000));
        }
        {
            // Gone before the tail: the worker goes on serving.
            Client client(portico.port(), 4 * 1024);
            client.send(get_request("/pieces", accept));
            std::this_thread::sleep_for(300ms);
        }
        auto after = fetch_encoded(portico.port(), "/next", coding);
        REQUIRE(after);
        CHECK(decode_body(coding, after->body) == json_text(3000));
    }
}

TEST_CASE("compress: a WebSocket through a compressing location is tunnelled untouched", "[compress]") {
    UpstreamServer upstream([](const ReceivedRequest&) { return Reply::websocket(); });
    Portico portico(compress_config(upstream));
    Client client(portico.port());
    ResponseReader reader(client.fd());
    client.send("GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                "Accept-Encoding: gzip, br\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n");
    auto head = reader.read_head();
    REQUIRE(head);
    CHECK(head->status == 101);
    CHECK(head->header("content-encoding").empty());
    client.send("text that would compress, text that would compress");
    REQUIRE(reader.read_at_least(50, 2s));
    CHECK(reader.buffered() == "text that would compress, text that would compress");
}

TEST_CASE("compress: counters by coding: responses, bytes in and out", "[compress]") {
    const std::string body = json_text(30000);
    UpstreamServer upstream([&](const ReceivedRequest&) { return Reply::text(200, body); });
    uint16_t metrics_port = unused_port();
    Portico portico(with_metrics(compress_config(upstream), metrics_port));
    uint64_t sent_br = 0;
    for (const char* accept : {"br", "br", "gzip", ""}) {
        auto response = fetch_encoded(portico.port(), "/", accept);
        REQUIRE(response);
        if (std::string(accept) == "br") sent_br += response->body.size();
    }
    CHECK(metric(metrics_port, "portico_compressed_responses_total{coding=\"br\"}") == 2);
    CHECK(metric(metrics_port, "portico_compressed_responses_total{coding=\"gzip\"}") == 1);
    CHECK(metric(metrics_port, "portico_compressed_responses_total{coding=\"zstd\"}") == 0);
    CHECK(metric(metrics_port, "portico_compressed_cache_hits_total{coding=\"br\"}") == 0);
    CHECK(metric(metrics_port, "portico_compression_in_bytes_total{coding=\"br\"}") == 2.0 * body.size());
    CHECK(metric(metrics_port, "portico_compression_out_bytes_total{coding=\"br\"}") == static_cast<double>(sent_br));
}
