// Writes the seed corpus of fuzz_http2_session (corpus/http2_session): valid
// client sessions, each file as the target reads it (a split byte, a
// choice byte, then the preface and frames), header blocks as plain
// literals or by nghttp2's HPACK deflater, frames laid out by hand so CONTINUATION,
// padding and priority appear as written. Not part of the build:
//
//   g++ -std=c++20 tests/fuzz/make_http2_seeds.cpp -lnghttp2 -o /tmp/make_http2_seeds
//   /tmp/make_http2_seeds tests/fuzz/corpus/http2_session
#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

constexpr uint8_t DATA = 0, HEADERS = 1, PRIORITY = 2, RST_STREAM = 3, SETTINGS = 4, PING = 6,
                  GOAWAY = 7, WINDOW_UPDATE = 8, CONTINUATION = 9;
constexpr uint8_t END_STREAM = 1, ACK = 1, END_HEADERS = 4, PADDED = 8, PRIORITY_FLAG = 0x20;

std::string u32(uint32_t value) {
    return {static_cast<char>(value >> 24), static_cast<char>(value >> 16),
            static_cast<char>(value >> 8), static_cast<char>(value)};
}

std::string frame(uint8_t type, uint8_t flags, uint32_t stream, const std::string& payload) {
    std::string out;
    size_t length = payload.size();
    out += static_cast<char>(length >> 16);
    out += static_cast<char>(length >> 8);
    out += static_cast<char>(length);
    out += static_cast<char>(type);
    out += static_cast<char>(flags);
    out += u32(stream);
    return out + payload;
}

// One client connection: its HPACK encoder state and the bytes so far.
struct Client {
    nghttp2_hd_deflater* deflater = nullptr;
    std::string bytes = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

    Client() {
        if (nghttp2_hd_deflate_new(&deflater, 4096) != 0) std::abort();
        bytes += frame(SETTINGS, 0, 0, "");
    }
    ~Client() { nghttp2_hd_deflate_del(deflater); }

    // Literal fields without indexing, names and values as plain bytes
    // (RFC 7541 6.2.2, no Huffman): the fuzzer's mutations and comparisons
    // then act on paths and values it can read. `plain` false: nghttp2's
    // deflater (dynamic table, Huffman), as a browser sends them.
    bool plain = true;
    static std::string length_prefixed(const std::string& text) {
        std::string out;
        size_t length = text.size();
        if (length < 127) {
            out += static_cast<char>(length);
        } else {
            out += static_cast<char>(127);
            for (length -= 127; length >= 128; length >>= 7) out += static_cast<char>((length & 127) | 128);
            out += static_cast<char>(length);
        }
        return out + text;
    }
    std::string block(const Fields& fields) {
        if (plain) {
            std::string out;
            for (const auto& [name, value] : fields)
                out += std::string(1, '\0') + length_prefixed(name) + length_prefixed(value);
            return out;
        }
        std::vector<nghttp2_nv> nva;
        for (const auto& [name, value] : fields)
            nva.push_back({(uint8_t*)name.data(), (uint8_t*)value.data(), name.size(), value.size(),
                           NGHTTP2_NV_FLAG_NONE});
        std::string out(nghttp2_hd_deflate_bound(deflater, nva.data(), nva.size()), '\0');
        ssize_t made = nghttp2_hd_deflate_hd(deflater, (uint8_t*)out.data(), out.size(), nva.data(),
                                             nva.size());
        if (made < 0) std::abort();
        out.resize(static_cast<size_t>(made));
        return out;
    }
    Client& headers(uint32_t stream, const Fields& fields, bool end_stream) {
        bytes += frame(HEADERS, END_HEADERS | (end_stream ? END_STREAM : 0), stream, block(fields));
        return *this;
    }
    // The block cut in `pieces` frames: HEADERS then CONTINUATIONs.
    Client& split_headers(uint32_t stream, const Fields& fields, bool end_stream, size_t pieces) {
        std::string encoded = block(fields);
        size_t step = (encoded.size() + pieces - 1) / pieces;
        for (size_t i = 0, at = 0; at < encoded.size(); ++i, at += step) {
            bool last = at + step >= encoded.size();
            uint8_t flags = (last ? END_HEADERS : 0) | (i == 0 && end_stream ? END_STREAM : 0);
            bytes += frame(i == 0 ? HEADERS : CONTINUATION, flags, stream, encoded.substr(at, step));
        }
        return *this;
    }
    Client& data(uint32_t stream, const std::string& body, bool end_stream, uint8_t pad = 0) {
        if (pad == 0) {
            bytes += frame(DATA, end_stream ? END_STREAM : 0, stream, body);
        } else {
            std::string payload = std::string(1, static_cast<char>(pad)) + body + std::string(pad, '\0');
            bytes += frame(DATA, PADDED | (end_stream ? END_STREAM : 0), stream, payload);
        }
        return *this;
    }
    Client& window_update(uint32_t stream, uint32_t increment) {
        bytes += frame(WINDOW_UPDATE, 0, stream, u32(increment));
        return *this;
    }
    Client& settings(const std::vector<std::pair<uint16_t, uint32_t>>& entries) {
        std::string payload;
        for (auto [id, value] : entries) {
            payload += static_cast<char>(id >> 8);
            payload += static_cast<char>(id);
            payload += u32(value);
        }
        bytes += frame(SETTINGS, 0, 0, payload);
        return *this;
    }
    Client& settings_ack() {
        bytes += frame(SETTINGS, ACK, 0, "");
        return *this;
    }
    Client& ping(bool ack = false) {
        bytes += frame(PING, ack ? ACK : 0, 0, "portico!");
        return *this;
    }
    Client& rst(uint32_t stream, uint32_t code) {
        bytes += frame(RST_STREAM, 0, stream, u32(code));
        return *this;
    }
    Client& priority(uint32_t stream, uint32_t depends_on, uint8_t weight) {
        bytes += frame(PRIORITY, 0, stream, u32(depends_on) + std::string(1, static_cast<char>(weight)));
        return *this;
    }
    Client& goaway(uint32_t last, uint32_t code) {
        bytes += frame(GOAWAY, 0, 0, u32(last) + u32(code));
        return *this;
    }
};

Fields get(const std::string& path, Fields extra = {}, const std::string& method = "GET") {
    Fields fields{{":method", method}, {":scheme", "http"}, {":authority", "localhost"}, {":path", path}};
    fields.insert(fields.end(), extra.begin(), extra.end());
    return fields;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s FOLDER\n", argv[0]);
        return 2;
    }
    std::string folder = argv[1];
    int written = 0;
    // split: 0 whole, 1..15 that many bytes a read, else % 64 + 1.
    // choice: 1 timeout at end, 2 drain after the first read, 4 client reads late, 8 timeout after
    // each read, 16 a writability event after each read, 32 our SETTINGS before any input (TLS).
    auto save = [&](const char* name, uint8_t split, uint8_t choice, const Client& client) {
        std::ofstream out(folder + "/" + name, std::ios::binary);
        out << static_cast<char>(split) << static_cast<char>(choice) << client.bytes;
        if (!out.good()) std::abort();
        ++written;
    };

    {
        Client c;
        c.settings_ack().headers(1, get("/hello"), true);
        save("get-respond", 0, 0, c);
    }
    {
        Client c;
        c.settings_ack().headers(1, get("/index.html", {}, "HEAD"), true).headers(3, get("/nothing"), true);
        save("head-and-204", 0, 0, c);
    }
    {
        Client c;
        c.headers(1, get("/a.txt", {{"user-agent", "seed"}}), true).ping();
        save("get-small-file-bytewise", 1, 0, c);
    }
    {
        Client c;
        c.settings({{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 16384}, {NGHTTP2_SETTINGS_MAX_FRAME_SIZE, 16384}})
            .headers(1, get("/big.bin"), true)
            .window_update(0, 1 << 20)
            .window_update(1, 200000);
        save("get-big-file-window-update", 0, 0, c);
    }
    {
        Client c;
        c.headers(1, get("/big.bin"), true).window_update(1, 100000);
        save("get-big-file-slow-reader", 0, 4 | 1, c);
    }
    {
        Client c;
        c.headers(1, get("/hello", {{"content-length", "9"}, {"content-type", "text/plain"}}, "POST"), false)
            .data(1, "x=1&y=two", true);
        save("post-with-length", 0, 0, c);
    }
    {
        Client c;
        c.headers(1, get("/index.html", {}, "POST"), false)
            .data(1, "first part, ", false)
            .data(1, "second part", false, 7)
            .data(1, "", true);
        save("post-no-length-padded", 7, 0, c);
    }
    {
        Client c;
        c.plain = false;
        c.headers(1, get("/hello", {{"content-length", "100000"}}, "POST"), false).data(1, "abc", false);
        save("post-too-large", 0, 0, c);
    }
    {
        Client c;
        c.headers(1, get("/hello", {}, "POST"), false)
            .data(1, "body", false)
            .headers(1, {{"x-trailer", "yes"}}, true);
        save("post-with-trailers", 0, 0, c);
    }
    {
        Client c;
        c.plain = false;
        c.headers(1, get("/z/app.js", {{"accept-encoding", "gzip, deflate, br, zstd"}}), true)
            .headers(3, get("/z/style.css", {{"accept-encoding", "gzip"}}), true)
            .headers(5, get("/z/page.html", {{"accept-encoding", "br"}}), true)
            .headers(7, get("/z/tiny.json", {{"accept-encoding", "zstd"}}), true)
            .window_update(0, 1 << 20)
            .window_update(1, 1 << 20);
        save("compressed", 0, 0, c);
    }
    {
        Client c;
        c.headers(1, get("/big.bin", {{"range", "bytes=0-99"}}), true)
            .headers(3, get("/big.bin", {{"range", "bytes=100000-"}}), true)
            .headers(5, get("/index.html", {{"if-none-match", "*"}}), true)
            .headers(7, get("/index.html", {{"if-modified-since", "Sun, 06 Nov 2094 08:49:37 GMT"}}), true);
        save("ranges-conditionals", 0, 0, c);
    }
    {
        Client c;
        c.plain = false;
        c.settings({{NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, 0},
                    {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
                    {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100},
                    {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20},
                    {NGHTTP2_SETTINGS_MAX_FRAME_SIZE, 1 << 20},
                    {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, 8192}})
            .ping()
            .ping(true)
            .headers(1, get("/hello"), true)
            .settings_ack();
        save("settings-ping", 0, 0, c);
    }
    {
        Client c;
        c.headers(1, get("/big.bin"), true).rst(1, NGHTTP2_CANCEL).headers(3, get("/hello"), true);
        save("rst-stream", 0, 0, c);
    }
    {
        Client c;
        c.headers(1, get("/hello"), true).goaway(0, NGHTTP2_NO_ERROR);
        save("goaway", 0, 0, c);
    }
    {
        Client c;
        c.plain = false;
        Fields extra{{"user-agent", std::string(300, 'u')}, {"accept", "text/html,*/*;q=0.8"},
                     {"cookie", "a=1"}, {"cookie", "b=2"}, {"cookie", "c=3"}};
        c.split_headers(1, get("/index.html", extra), true, 4);
        save("continuation-cookies", 0, 0, c);
    }
    {
        Client c;
        for (uint32_t stream = 1; stream <= 21; stream += 2) c.headers(stream, get("/a.txt"), true);
        save("more-than-max-concurrent", 0, 0, c);
    }
    {
        Client c;
        c.priority(3, 0, 200);
        std::string block = c.block(get("/hello"));
        c.bytes += frame(HEADERS, END_HEADERS | END_STREAM | PRIORITY_FLAG, 1,
                         u32(3) + std::string(1, '\x10') + block);
        c.headers(3, get("/missing.txt"), true)
            .headers(5, get("/../etc/passwd"), true)
            .headers(7, get("/%2e%2e/x"), true)
            .headers(9, get("/z/", {}, "OPTIONS"), true);
        save("priority-404-400", 0, 0, c);
    }
    {
        Client c;
        c.headers(1, get("/big.bin"), true).headers(3, get("/z/app.js", {{"accept-encoding", "gzip"}}), true);
        save("drain-with-open-streams", 0, 2 | 4, c);
    }
    {
        Client c;
        c.headers(1, get("/hello", {{"content-length", "5"}}, "POST"), false).data(1, "ab", false);
        save("stalled-body-timeout", 0, 8 | 1, c);
    }
    {
        Client c;
        save("idle-timeout", 0, 1, c);
    }
    {
        Client c;
        c.headers(1, get("/z/app.js", {{"accept-encoding", "gzip"}}), true)
            .headers(3, get("/big.bin"), true)
            .rst(3, NGHTTP2_CANCEL)
            .window_update(1, 1 << 16);
        save("writable-events-bytewise", 13, 16, c);
    }
    {
        Client c;
        c.settings_ack().headers(1, get("/z/page.html", {{"accept-encoding", "gzip, br"}}), true);
        save("settings-before-preface", 0, 32, c);
    }
    std::printf("%d seeds in %s\n", written, folder.c_str());
    return 0;
}
