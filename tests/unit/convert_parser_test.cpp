// nginx's syntax as portico convert reads it: words, quoted strings and
// their escapes, comments, variables in braces, blocks, includes (globs,
// relative to the prefix), and the errors that stop a conversion.
#include <catch2/catch.hpp>

#include "convert_support.hpp"

using namespace portico::convert;
using portico::test::convert_support::Folder;

namespace convert_parser_test {

TEST_CASE("convert parser: words, quoted strings with escapes, comments, blocks", "[convert]") {
    ParsedConfig parsed = parse_nginx_text(
        "# a comment\n"
        "http {\n"
        "    add_header X-A \"a \\\"quoted\\\" value\" always; # trailing comment\n"
        "    return 200 'single\\'s\\n';\n"
        "    rewrite ^/(\\d+)$ /n/${1}x;\n"
        "    location ~ \"^/a{2,3}$\" { root /srv; }\n"
        "    proxy_pass http://app#not-a-comment;\n"
        "}\n",
        "nginx.conf", "/etc/nginx");
    REQUIRE(parsed.error.empty());
    REQUIRE(parsed.top.size() == 1);
    const Directive& http = parsed.top[0];
    CHECK(http.name == "http");
    CHECK(http.has_block);
    REQUIRE(http.block.size() == 5);
    CHECK(http.block[0].args == std::vector<std::string>{"X-A", "a \"quoted\" value", "always"});
    CHECK(http.block[0].source.line == 3);
    CHECK(http.block[1].args == std::vector<std::string>{"200", "single's\n"});
    // A backslash that is no nginx escape stays: the regex reads "\d".
    CHECK(http.block[2].args == std::vector<std::string>{"^/(\\d+)$", "/n/${1}x"});
    CHECK(http.block[3].args == std::vector<std::string>{"~", "^/a{2,3}$"});
    REQUIRE(http.block[3].block.size() == 1);
    CHECK(http.block[3].block[0].source.line == 6);
    CHECK(http.block[4].args == std::vector<std::string>{"http://app#not-a-comment"});
    // The text in comments and refusals quotes what needs it.
    CHECK(http.block[0].text() == "add_header X-A \"a \\\"quoted\\\" value\" always");
    CHECK(http.block[1].text() == "return 200 \"single's\\n\"");
}

TEST_CASE("convert parser: include with globs, relative to the prefix, in name order",
          "[convert]") {
    Folder folder;
    folder.write("conf.d/b.conf", "server { listen 81; }\n");
    folder.write("conf.d/a.conf", "server { listen 80; }\n");
    folder.write("single.conf", "upstream app { server 127.0.0.1:3000; }\n");
    ParsedConfig parsed = parse_nginx_text(
        "http {\n include single.conf;\n include conf.d/*.conf;\n include none/*.conf;\n"
        " include missing.conf;\n}\n",
        folder.path() + "/nginx.conf", folder.path());
    REQUIRE(parsed.error.empty());
    const std::vector<Directive>& block = parsed.top.at(0).block;
    REQUIRE(block.size() == 3);
    CHECK(block[0].name == "upstream");
    CHECK(block[0].source.file == folder.path() + "/single.conf");
    CHECK(block[1].block.at(0).args == std::vector<std::string>{"80"});
    CHECK(block[2].block.at(0).args == std::vector<std::string>{"81"});
    CHECK(block[2].source.file == folder.path() + "/conf.d/b.conf");
    // A glob that matches nothing is fine (nginx too); a missing file is
    // refused, and the rest is still read.
    REQUIRE(parsed.refusals.size() == 1);
    CHECK(parsed.refusals[0].to_string().starts_with(folder.path() +
                                                     "/nginx.conf:5: include missing.conf: "
                                                     "cannot read"));
}

TEST_CASE("convert parser: an include that includes itself stops", "[convert]") {
    Folder folder;
    folder.write("loop.conf", "include loop.conf;\n");
    ParsedConfig parsed =
        parse_nginx_text("include loop.conf;\n", folder.path() + "/nginx.conf", folder.path());
    CHECK(parsed.error.empty());
    REQUIRE_FALSE(parsed.refusals.empty());
    CHECK(parsed.refusals.back().why == "includes nested too deep");
}

TEST_CASE("convert parser: syntax errors name the file and line", "[convert]") {
    struct Bad {
        const char* text;
        const char* error;
    };
    auto bad = GENERATE(values<Bad>({
        {"http {\n add_header X \"open;\n}\n", "nginx.conf:2: unterminated quoted string"},
        {"http {\n server {\n}\n", "nginx.conf:4: unexpected end of file, expecting \"}\""},
        {"http {\n}\n}\n", "nginx.conf:3: unexpected \"}\""},
        {"http {\n root /srv\n}\n", "nginx.conf:3: directive \"root\" is not terminated by \";\""},
        {"http {\n ;\n}\n", "nginx.conf:2: unexpected \";\" or \"{\""},
        {"root \"a\"b;\n", "nginx.conf:1: unexpected \"b\" after a quoted string"},
    }));
    INFO(bad.text);
    ParsedConfig parsed = parse_nginx_text(bad.text, "nginx.conf", "/etc/nginx");
    CHECK(parsed.error == bad.error);
    CHECK(parsed.top.empty());
}

TEST_CASE("convert parser: an unreadable file", "[convert]") {
    ParsedConfig parsed = parse_nginx_file("/nonexistent/nginx.conf", "/nonexistent");
    CHECK(parsed.error == "/nonexistent/nginx.conf: cannot read the file");
}

}  // namespace convert_parser_test
