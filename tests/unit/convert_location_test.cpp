// portico convert: location kinds, files (root, alias, index, try_files),
// return, rewrite, error_page, add_header, expires, compression.
#include <catch2/catch.hpp>

#include "convert_support.hpp"

using namespace portico::test::convert_support;

namespace convert_location_test {

std::string server(const std::string& body) {
    return "server {\n listen 80;\n root www;\n" + body + "\n}\n";
}

TEST_CASE("convert: location kinds", "[convert]") {
    Folder folder;
    Result result = convert_http(folder, server("location = /exact { root www; }\n"
                                                "location ^~ /images/ { root www; }\n"
                                                "location ~ \\.php$ { return 404; }\n"
                                                "location ~* \\.(png|jpg)$ { expires 1d; }\n"
                                                "location /api/ { root www; }\n"
                                                "location / { root www; }"));
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    CHECK(result.has("exact = \"/exact\""));
    CHECK(result.has("prefix = \"/images/\"\nstop_regex = true"));
    CHECK(result.has("regex = '\\.php$'"));
    CHECK(result.has("regex = '(?i)\\.(png|jpg)$'"));
    CHECK(result.has("expires = \"86400s\""));
    CHECK(result.has("# nginx.conf:10: location /api/\n[[site.location]]\nprefix = \"/api/\""));
    // With a `location /` of its own, no implicit one.
    CHECK_FALSE(result.has("what no location matches"));
}

TEST_CASE("convert: a regex RE2 cannot run the same is refused", "[convert]") {
    Folder folder;
    auto pattern = GENERATE(as<std::string>{}, "^/(?!api)", "(a)\\1", "^/(?<=x)y", "a++");
    INFO(pattern);
    Result result = convert_http(folder, server("location ~ \"" + pattern + "\" { root www; }"));
    CHECK(result.refused("location ~"));
    CHECK(result.refusals.at(0).find("PCRE feature RE2 lacks") != std::string::npos);
    CHECK(result.config_errors.empty());
    Result rewrite = convert_http(
        folder, server("location / { rewrite \"" + pattern + "\" /x last; root www; }"));
    CHECK(rewrite.refused("rewrite"));
}

TEST_CASE("convert: root, alias, index and try_files", "[convert]") {
    Folder folder;
    Result result = convert_http(folder, server("index index.htm index.html;\n"
                                                "location /static/ { alias www/docs/; }\n"
                                                "location = /favicon.ico { alias www/f.ico; }\n"
                                                "location / { try_files $uri $uri.html $uri/ "
                                                "/index.html; }\n"
                                                "location /a/ { try_files $uri =404; }"));
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.has("alias = \"" + folder.path() + "/www/docs/\""));
    CHECK(result.has("index = [\"index.htm\", \"index.html\"]"));
    CHECK(result.has("try_files = [\"$uri\", \"$uri.html\", \"$uri/\", \"/index.html\"]"));
    CHECK(result.has("try_files = [\"$uri\", \"=404\"]"));
    Result regex_alias = convert_http(folder, server("location ~ ^/i/(.*)$ { alias www/$1; }"));
    CHECK(regex_alias.refused("alias www/$1"));
    Result missing_root = convert_http(folder, "server { root nowhere; }");
    CHECK(missing_root.refused("root nowhere"));
}

TEST_CASE("convert: try_files falling back to a named location", "[convert]") {
    Folder folder;
    Result result = convert_http(folder, server("location / { try_files $uri $uri/ @app; }\n"
                                                "location @app {\n"
                                                "  proxy_pass http://127.0.0.1:3000;\n"
                                                "  proxy_set_header Host $host;\n"
                                                "  proxy_set_header X-Forwarded-For "
                                                "$proxy_add_x_forwarded_for;\n"
                                                "}"));
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    CHECK(result.has("[upstream.127_0_0_1_3000]\nservers = [\"127.0.0.1:3000\"]"));
    CHECK(result.has("try_files = [\"$uri\", \"$uri/\", \"@127_0_0_1_3000\"]"));
    // The named location's headers go with it.
    CHECK(result.has("proxy_headers = { Host = \"$host\", X-Forwarded-Proto = \"\""));
    Result unknown = convert_http(folder, server("location / { try_files $uri @nope; }"));
    CHECK(unknown.refused("try_files $uri @nope"));
    Result no_proxy = convert_http(folder, server("location / { try_files $uri @files; }\n"
                                                  "location @files { root www; }"));
    CHECK(no_proxy.refused("try_files $uri @files"));
}

TEST_CASE("convert: return as redirect or respond", "[convert]") {
    Folder folder;
    Result result = convert_http(folder, server("location = /a { return 301 /b; }\n"
                                                "location = /b { return https://x.test$uri; }\n"
                                                "location = /c { return 200 \"ok\\n\"; }\n"
                                                "location = /d { return 444; }\n"
                                                "location = /e { return 404; }\n"
                                                "location = /f { return 308 $scheme://x.test; }"));
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    CHECK(result.has("redirect = { to = \"/b\", status = 301 }"));
    CHECK(result.has("redirect = { to = \"https://x.test$uri\", status = 302 }"));
    CHECK(result.has("respond = { status = 200, body = \"ok\\n\" }"));
    CHECK(result.has("respond = { status = 444 }"));
    CHECK(result.has("respond = { status = 404, body = \"404 Not Found\\n\" }"));
    CHECK(result.has("redirect = { to = \"$scheme://x.test\", status = 308 }"));
    CHECK(result.has("the body goes out as text/plain"));
    Result variable = convert_http(folder, server("location = /v { return 200 $request_method; }"));
    CHECK(variable.refused("return 200 $request_method"));
    Result unknown = convert_http(folder, server("location = /v { return 301 /x$is_args$args; }"));
    CHECK(unknown.refused("return 301"));
}

TEST_CASE("convert: rewrite rules and their flags", "[convert]") {
    Folder folder;
    Result result =
        convert_http(folder, server("location /blog/ {\n"
                                    "  rewrite ^/blog/(\\d+)/(.*)$ /posts/$2?y=$1 permanent;\n"
                                    "  rewrite ^/blog/(.*)$ /app/$1 break;\n"
                                    "  root www;\n"
                                    "}\n"
                                    "location /old/ { rewrite ^/old/(.*)$ /new/$1; }"));
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    CHECK(
        result.has("rewrite = [{ from = '^/blog/(\\d+)/(.*)$', to = \"/posts/$2?y=$1\", "
                   "flag = \"permanent\" }, { from = '^/blog/(.*)$', to = \"/app/$1\", "
                   "flag = \"break\" }]"));
    // The last rule without a flag is `last`: portico's default.
    CHECK(result.has("rewrite = [{ from = '^/old/(.*)$', to = \"/new/$1\" }]"));
    Result chain = convert_http(folder, server("location / { rewrite ^/a /b; rewrite ^/b /c; "
                                               "root www; }"));
    CHECK(chain.refused("rewrite ^/a /b"));
    Result capture = convert_http(folder, server("location / { rewrite ^/a /$2 last; }"));
    CHECK(capture.refused("rewrite ^/a /$2 last"));
    Result both = convert_http(folder, server("location / { rewrite ^/a /b last; return 404; }"));
    CHECK(both.refused("return 404"));
}

TEST_CASE("convert: error_page", "[convert]") {
    Folder folder;
    Result result =
        convert_http(folder, server("error_page 404 /404.html;\n"
                                    "error_page 500 502 503 504 /50x.html;\n"
                                    "location / { root www; }\n"
                                    "location /api/ { proxy_pass http://127.0.0.1:3000; "
                                    "proxy_set_header Host $host; }"));
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    CHECK(
        result.has("error_pages = { 404 = \"/404.html\", 500 = \"/50x.html\", 502 = "
                   "\"/50x.html\", 503 = \"/50x.html\", 504 = \"/50x.html\" }"));
    // Without proxy_intercept_errors nginx leaves the app's own errors alone.
    CHECK(result.has("also replace the app's own 404, 500, 502, 503, 504 responses"));
    Result code = convert_http(folder, server("error_page 404 =200 /empty.gif;"));
    CHECK(code.refused("error_page 404 =200 /empty.gif"));
    Result named = convert_http(folder, server("error_page 502 @down;"));
    CHECK(named.refused("error_page 502 @down"));
}

TEST_CASE("convert: add_header, always, and nginx's inheritance", "[convert]") {
    Folder folder;
    Result result =
        convert_http(folder, server("add_header X-Frame-Options DENY;\n"
                                    "add_header X-Content-Type-Options nosniff;\n"
                                    "location / { root www; }\n"
                                    "location /api/ { add_header Cache-Control no-store "
                                    "always; root www; }"));
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    // A location without add_header inherits the server's ...
    CHECK(
        result.has("headers = { X-Frame-Options = \"DENY\", X-Content-Type-Options = "
                   "\"nosniff\" }"));
    // ... one with its own has only those.
    CHECK(result.has("headers = { Cache-Control = \"no-store\" }\nheaders_always = true"));
    // A return's answer carries them too.
    Result redirect = convert_http(folder, server("location = /old { add_header X-A a always; "
                                                  "return 301 /new; }"));
    CHECK(
        redirect.has("redirect = { to = \"/new\", status = 301 }\nheaders = { X-A = \"a\" }\n"
                     "headers_always = true"));
    CHECK(redirect.config_errors.empty());
    Result mixed = convert_http(folder, server("add_header A a; add_header B b always;"));
    CHECK(mixed.refused("add_header B b always"));
    Result twice = convert_http(folder, server("add_header A a; add_header A b;"));
    CHECK(twice.refused("add_header A b"));
}

TEST_CASE("convert: expires", "[convert]") {
    Folder folder;
    Result result = convert_http(folder, server("location /a/ { expires 1y; root www; }\n"
                                                "location /b/ { expires off; root www; }\n"
                                                "location /c/ { expires max; root www; }\n"
                                                "location /d/ { expires -1; root www; }"));
    CHECK(result.has("expires = \"31536000s\""));
    CHECK(result.refused("expires max"));
    CHECK(result.refused("expires -1"));
    CHECK(result.config_errors.empty());
}

TEST_CASE("convert: gzip, brotli and their static sidecars", "[convert]") {
    Folder folder;
    Result result = convert_http(folder,
                                 "gzip on;\ngzip_comp_level 6;\ngzip_min_length 256;\n"
                                 "gzip_types text/css application/json;\n"
                                 "gzip_vary on;\ngzip_proxied any;\n" +
                                     server("location /a/ { gzip_static on; root www; }\n"
                                            "location /b/ { gzip_static on; "
                                            "brotli_static on; root www; }"));
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    CHECK(
        result.has("compress = { types = [\"application/json\", \"text/css\", \"text/html\"], "
                   "min_length = 256, gzip_level = 6, brotli_level = 6 }"));
    CHECK(result.has("portico also offers br and zstd"));
    CHECK(result.has("gzip_static = true"));
    CHECK(result.has("precompressed = [\"br\", \"gzip\"]"));
    CHECK(result.has("gzip_vary on: dropped"));
    Result any = convert_http(folder, "gzip on; gzip_types *;\n" + server(""));
    CHECK(any.refused("gzip_types *"));
}

TEST_CASE("convert: what no location matches is the server's root", "[convert]") {
    Folder folder;
    Result result = convert_http(folder, server("location /api/ { return 404; }"));
    INFO(result.toml);
    CHECK(
        result.has("what no location matches (the server's own root)\n[[site.location]]\n"
                   "prefix = \"/\"\nroot = \"" +
                   folder.path() + "/www\""));
    CHECK(result.config_errors.empty());
    // Nested locations are not portico's.
    Result nested = convert_http(folder, server("location /a/ { location /a/b/ { root www; } }"));
    CHECK(nested.refused("location /a/b/"));
}

}  // namespace convert_location_test
