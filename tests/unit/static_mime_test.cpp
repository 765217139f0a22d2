// Content-Type by extension: the built-in table and [mime] overrides.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>

#include "static/mime.hpp"

using portico::staticfiles::MimeTypes;

namespace {

const std::string octet = "application/octet-stream";

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

TEST_CASE("MimeTypes: the built-in web types", "[static][mime]") {
    const MimeTypes types;
    CHECK(types.for_file("index.html") == "text/html; charset=utf-8");
    CHECK(types.for_file("index.htm") == "text/html; charset=utf-8");
    CHECK(types.for_file("style.css") == "text/css; charset=utf-8");
    CHECK(types.for_file("app.js") == "text/javascript; charset=utf-8");
    CHECK(types.for_file("module.mjs") == "text/javascript; charset=utf-8");
    CHECK(starts_with(types.for_file("data.json"), "application/json"));
    CHECK(starts_with(types.for_file("notes.txt"), "text/plain"));
    CHECK(starts_with(types.for_file("logo.svg"), "image/svg+xml"));
    CHECK(types.for_file("logo.png") == "image/png");
    CHECK(types.for_file("photo.jpg") == "image/jpeg");
    CHECK(types.for_file("photo.jpeg") == "image/jpeg");
    CHECK(types.for_file("anim.gif") == "image/gif");
    CHECK(types.for_file("pic.webp") == "image/webp");
    CHECK(types.for_file("font.woff") == "font/woff");
    CHECK(types.for_file("font.woff2") == "font/woff2");
    CHECK(types.for_file("app.wasm") == "application/wasm");
    CHECK(types.for_file("doc.pdf") == "application/pdf");
}

TEST_CASE("MimeTypes: text types carry charset=utf-8, binary ones do not", "[static][mime]") {
    const MimeTypes types;
    for (std::string_view name : {"a.html", "a.css", "a.js", "a.txt"}) {
        INFO(std::string(name));
        CHECK(std::string(types.for_file(name)).find("charset=utf-8") != std::string::npos);
    }
    for (std::string_view name : {"a.png", "a.jpg", "a.wasm", "a.woff2", "a.gif", "a.bin"}) {
        INFO(std::string(name));
        CHECK(std::string(types.for_file(name)).find("charset") == std::string::npos);
    }
}

TEST_CASE("MimeTypes: the extension is matched without regard to case", "[static][mime]") {
    const MimeTypes types;
    CHECK(types.for_file("app.JS") == "text/javascript; charset=utf-8");
    CHECK(types.for_file("INDEX.HTML") == "text/html; charset=utf-8");
    CHECK(types.for_file("Index.Html") == "text/html; charset=utf-8");
    CHECK(types.for_file("LOGO.PNG") == "image/png");
    CHECK(types.for_file("photo.JpG") == "image/jpeg");
}

TEST_CASE("MimeTypes: no or unknown extension is application/octet-stream", "[static][mime]") {
    const MimeTypes types;
    CHECK(types.for_file("README") == octet);
    CHECK(types.for_file("Makefile") == octet);
    CHECK(types.for_file("file.unknownext") == octet);
    CHECK(types.for_file("file.") == octet);
    CHECK(types.for_file("") == octet);
    // A dotfile's name is not an extension.
    CHECK(types.for_file(".bashrc") == octet);
    CHECK(types.for_file(".htaccess") == octet);
    // "html" is a name here, not an extension.
    CHECK(types.for_file("html") == octet);
}

TEST_CASE("MimeTypes: the last extension decides", "[static][mime]") {
    const MimeTypes types({{"tar", "application/x-tar"}, {"gz", "application/gzip"}});
    CHECK(types.for_file("archive.tar.gz") == "application/gzip");
    CHECK(types.for_file("archive.tar") == "application/x-tar");
    CHECK(types.for_file("jquery.min.js") == "text/javascript; charset=utf-8");
    CHECK(types.for_file("index.html.bak") == octet);
    CHECK(types.for_file("app.js.map") != types.for_file("app.js"));
    const MimeTypes builtin;
    CHECK(builtin.for_file("archive.tar.gz") == builtin.for_file("x.gz"));
}

TEST_CASE("MimeTypes: [mime] adds and overrides types", "[static][mime]") {
    const MimeTypes types({{"foo", "application/x-foo"}, {"html", "text/x-custom"}});
    CHECK(types.for_file("a.foo") == "application/x-foo");
    CHECK(types.for_file("a.FOO") == "application/x-foo");
    CHECK(types.for_file("b.html") == "text/x-custom");
    CHECK(types.for_file("b.HTML") == "text/x-custom");
    // The rest of the built-in table is untouched.
    CHECK(types.for_file("c.css") == "text/css; charset=utf-8");
    CHECK(types.for_file("d.png") == "image/png");
    CHECK(types.for_file("e.unknownext") == octet);
    // Without overrides foo is unknown.
    CHECK(MimeTypes().for_file("a.foo") == octet);
}
