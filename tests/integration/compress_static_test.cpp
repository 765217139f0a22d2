// compress and precompressed on a static location, on the real binary: a
// file compressed once per coding and level and then served from the
// compressed cache (counted), compressed again from its new bytes after a
// change on disk, the requests that get the file as it is, and the
// sidecars .br/.zst/.gz chosen by the same negotiation.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "content_decoder.hpp"
#include "proxy_support.hpp"
#include "static_site.hpp"

using namespace portico::test;

namespace {

// CSS-like text, compressible and different all along.
std::string css_text(size_t size, int variant = 0) {
    std::string text;
    for (unsigned i = 0; text.size() < size; ++i)
        text += ".rule-" + std::to_string(i) + "-" + std::to_string(variant) + " { margin: " +
                std::to_string(i % 17) + "px; color: #" + std::to_string(100000 + i * 7919 % 899999) +
                "; }\n";
    text.resize(size);
    return text;
}

std::string static_config(const Site& site, const std::string& options, uint16_t metrics_port) {
    return with_metrics(static_site_config(site.root(), options), metrics_port);
}

double compressed(uint16_t metrics_port, const char* coding) {
    return metric(metrics_port, std::string("portico_compressed_responses_total{coding=\"") + coding + "\"}");
}

double cache_hits(uint16_t metrics_port, const char* coding) {
    return metric(metrics_port, std::string("portico_compressed_cache_hits_total{coding=\"") + coding + "\"}");
}

}  // namespace

TEST_CASE("compress static: a file is compressed once per coding, then sent from the cache",
          "[compress][static]") {
    Site site;
    // 8 KB: kept in memory by the file cache; 200 KB: sent by sendfile when plain.
    const std::string small = css_text(8 * 1024);
    const std::string large = css_text(200 * 1024, 1);
    site.write("small.css", small);
    site.write("large.css", large);
    uint16_t metrics_port = unused_port();
    Portico portico(static_config(site, "compress = true", metrics_port));

    for (const auto& [target, original] : {std::pair{"/small.css", &small}, std::pair{"/large.css", &large}}) {
        auto plain = fetch_encoded(portico.port(), target, "");
        REQUIRE(plain);
        for (const char* coding : {"br", "zstd", "gzip"}) {
            INFO(target << " in " << coding);
            double before = compressed(metrics_port, coding);
            double hits_before = cache_hits(metrics_port, coding);
            for (int round = 0; round < 3; ++round) {
                auto response = fetch_encoded(portico.port(), target, coding);
                REQUIRE(response);
                CHECK(response->status == 200);
                CHECK(response->header("content-encoding") == coding);
                // Compressed whole: its length is known.
                CHECK(response->header("content-length") == std::to_string(response->body.size()));
                CHECK(response->header("etag") == "W/" + plain->header("etag"));
                CHECK(response->header("last-modified") == plain->header("last-modified"));
                CHECK(response->header("vary") == "Accept-Encoding");
                CHECK(response->header("accept-ranges").empty());
                CHECK(response->body.size() < original->size() / 3);
                bool decoded_whole = decode_body(coding, response->body) == *original;
                CHECK(decoded_whole);
            }
            CHECK(compressed(metrics_port, coding) == before + 3);
            CHECK(cache_hits(metrics_port, coding) == hits_before + 2);  // compressed the first time only
        }
        // Clients that accept nothing of ours: the file, with Vary.
        CHECK(plain->header("vary") == "Accept-Encoding");
        CHECK(plain->header("content-length") == std::to_string(original->size()));
        CHECK(plain->body == *original);
    }
}

TEST_CASE("compress static: each level is its own entry", "[compress][static]") {
    Site site;
    const std::string text = css_text(20 * 1024);
    site.write("a/app.css", text);
    site.write("b/app.css", text);
    uint16_t metrics_port = unused_port();
    Portico portico(with_metrics(
        "[server]\nlisten = [\"{listen}\"]\nworkers = 1\n"
        "[[location]]\nprefix = \"/a/\"\nroot = '" + site.root() + "'\ncompress = { gzip_level = 1 }\n"
        "[[location]]\nprefix = \"/b/\"\nroot = '" + site.root() + "'\ncompress = { gzip_level = 9 }\n",
        metrics_port));
    auto fast = fetch_encoded(portico.port(), "/a/app.css", "gzip");
    auto best = fetch_encoded(portico.port(), "/b/app.css", "gzip");
    REQUIRE(fast);
    REQUIRE(best);
    CHECK(decode_body("gzip", fast->body) == text);
    CHECK(decode_body("gzip", best->body) == text);
    CHECK(best->body.size() < fast->body.size());
    CHECK(cache_hits(metrics_port, "gzip") == 0);
}

TEST_CASE("compress static: a file changed on disk is compressed again from its new bytes",
          "[compress][static]") {
    Site site;
    uint16_t metrics_port = unused_port();
    // Rewritten in place, the same size: only the watch can tell.
    for (size_t size : {size_t{8 * 1024}, size_t{100 * 1024}}) {
        INFO(size << " bytes");
        const std::string path = site.write("app.css", css_text(size, 1));
        Portico portico(static_config(site, "compress = true", metrics_port));
        auto first = fetch_encoded(portico.port(), "/app.css", "br");
        auto cached = fetch_encoded(portico.port(), "/app.css", "br");
        REQUIRE(first);
        REQUIRE(cached);
        CHECK(decode_body("br", cached->body) == css_text(size, 1));
        CHECK(cache_hits(metrics_port, "br") == 1);

        std::ofstream(path, std::ios::binary | std::ios::trunc) << css_text(size, 2);
        auto changed = fetch_encoded(portico.port(), "/app.css", "br");
        REQUIRE(changed);
        bool fresh = decode_body("br", changed->body) == css_text(size, 2);
        CHECK(fresh);
        CHECK(changed->header("etag") != first->header("etag"));
        CHECK(cache_hits(metrics_port, "br") == 1);  // compressed again, not found
        auto again = fetch_encoded(portico.port(), "/app.css", "br");
        REQUIRE(again);
        CHECK(decode_body("br", again->body) == css_text(size, 2));
        CHECK(cache_hits(metrics_port, "br") == 2);
    }
}

TEST_CASE("compress static: Range, HEAD, 304 and other types get the file as it is",
          "[compress][static]") {
    Site site;
    const std::string text = css_text(10 * 1024);
    site.write("app.css", text);
    site.write("photo.jpg", css_text(10 * 1024, 3));
    site.write("tiny.css", "a{}\n");  // below min_length
    uint16_t metrics_port = unused_port();
    Portico portico(static_config(site, "compress = true", metrics_port));
    const std::string accept = "br, gzip";

    auto range = fetch_encoded(portico.port(), "/app.css", accept, "Range: bytes=10-19\r\n");
    REQUIRE(range);
    CHECK(range->status == 206);
    CHECK(range->header("content-encoding").empty());
    CHECK(range->body == text.substr(10, 10));

    auto head = fetch_encoded(portico.port(), "/app.css", accept, "", "HEAD");
    REQUIRE(head);
    CHECK(head->status == 200);
    CHECK(head->header("content-encoding").empty());
    CHECK(head->header("content-length") == std::to_string(text.size()));

    auto compressed_response = fetch_encoded(portico.port(), "/app.css", accept);
    REQUIRE(compressed_response);
    REQUIRE(compressed_response->header("etag").starts_with("W/"));
    // The weak tag revalidates (If-None-Match compares weakly): a 304.
    auto revalidated = fetch_encoded(portico.port(), "/app.css", accept,
                           "If-None-Match: " + compressed_response->header("etag") + "\r\n");
    REQUIRE(revalidated);
    CHECK(revalidated->status == 304);
    CHECK(revalidated->header("content-encoding").empty());
    CHECK(revalidated->body.empty());

    for (const char* target : {"/photo.jpg", "/tiny.css"}) {
        INFO(target);
        auto response = fetch_encoded(portico.port(), target, accept);
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->header("content-encoding").empty());
        CHECK(response->header("vary").empty());
    }
    auto missing = fetch_encoded(portico.port(), "/nothing.css", accept);
    REQUIRE(missing);
    CHECK(missing->status == 404);
    CHECK(missing->header("content-encoding").empty());
}

TEST_CASE("compress static: a file above 4 MiB goes out as it is", "[compress][static]") {
    Site site;
    const std::string big = css_text(4 * 1024 * 1024 + 1);
    site.write("big.css", big);
    uint16_t metrics_port = unused_port();
    Portico portico(static_config(site, "compress = true", metrics_port));
    auto response = fetch_encoded(portico.port(), "/big.css", "gzip");
    REQUIRE(response);
    CHECK(response->header("content-encoding").empty());
    CHECK(response->header("vary").empty());
    CHECK(response->body.size() == big.size());
}

TEST_CASE("precompressed: the sidecar the client prefers, by the same negotiation",
          "[compress][static]") {
    Site site;
    const std::string original = css_text(6000);
    // Sidecars are sent as they are: marked bytes show which one went.
    site.write("app.css", original);
    site.write("app.css.br", "BROTLI SIDECAR");
    site.write("app.css.zst", "ZSTD SIDECAR");
    site.write("app.css.gz", "GZIP SIDECAR");
    site.write("old.css", original);
    site.write("old.css.gz", "OLD GZIP SIDECAR");  // no .br, no .zst
    site.write("bare.css", original);                // no sidecar at all
    uint16_t metrics_port = unused_port();
    Portico portico(static_config(site, "precompressed = [\"br\", \"zstd\", \"gzip\"]\ncompress = true",
                                  metrics_port));
    struct Case {
        const char* target;
        const char* accept;
        const char* coding;
        const char* body;  // nullptr: compressed on the fly from the file
    };
    for (Case c : {Case{"/app.css", "gzip, deflate, br, zstd", "br", "BROTLI SIDECAR"},
                   Case{"/app.css", "gzip, zstd", "zstd", "ZSTD SIDECAR"},
                   Case{"/app.css", "gzip", "gzip", "GZIP SIDECAR"},
                   Case{"/app.css", "br;q=0.5, gzip", "gzip", "GZIP SIDECAR"},
                   Case{"/app.css", "*, br;q=0", "zstd", "ZSTD SIDECAR"},
                   Case{"/old.css", "br, zstd, gzip", "gzip", "OLD GZIP SIDECAR"},
                   Case{"/old.css", "br", "br", nullptr},
                   Case{"/bare.css", "zstd, gzip", "zstd", nullptr}}) {
        INFO(c.target << " with Accept-Encoding: " << c.accept);
        auto response = fetch_encoded(portico.port(), c.target, c.accept);
        REQUIRE(response);
        CHECK(response->status == 200);
        CHECK(response->header("content-encoding") == c.coding);
        CHECK(response->header("vary") == "Accept-Encoding");
        CHECK(response->header("content-type") == "text/css; charset=utf-8");
        if (c.body) {
            CHECK(response->body == c.body);
            CHECK(response->header("content-length") == std::to_string(response->body.size()));
        } else {
            CHECK(decode_body(c.coding, response->body) == original);
        }
    }
    // Sidecars are not compressed again; only the last two were compressed here.
    CHECK(compressed(metrics_port, "br") + compressed(metrics_port, "zstd") +
              compressed(metrics_port, "gzip") == 2);

    auto refused = fetch_encoded(portico.port(), "/app.css", "gzip;q=0, br;q=0, zstd;q=0");
    REQUIRE(refused);
    CHECK(refused->body == original);
    CHECK(refused->header("content-encoding").empty());
    CHECK(refused->header("vary") == "Accept-Encoding");
}

TEST_CASE("precompressed: only the listed sidecars are looked for", "[compress][static]") {
    Site site;
    site.write("app.js", "console.log('plain');\n");
    site.write("app.js.br", "BROTLI SIDECAR");
    site.write("app.js.zst", "ZSTD SIDECAR");
    uint16_t metrics_port = unused_port();
    Portico portico(static_config(site, "precompressed = [\"zstd\"]", metrics_port));
    auto zstd = fetch_encoded(portico.port(), "/app.js", "br, zstd, gzip");
    auto none = fetch_encoded(portico.port(), "/app.js", "br, gzip");
    REQUIRE(zstd);
    REQUIRE(none);
    CHECK(zstd->body == "ZSTD SIDECAR");
    CHECK(zstd->header("content-encoding") == "zstd");
    CHECK(none->body == "console.log('plain');\n");
    CHECK(none->header("content-encoding").empty());
    CHECK(none->header("vary") == "Accept-Encoding");
}
