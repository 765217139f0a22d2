// portico convert: server blocks, listeners, names, TLS, HTTP/2, the exact
// forms of `if`, and what portico has once for all sites.
#include <catch2/catch.hpp>

#include "convert_support.hpp"

using namespace portico::test::convert_support;

namespace convert_server_test {

TEST_CASE("convert: listen forms, default_server, proxy_protocol, names", "[convert]") {
    Folder folder;
    Result result = convert_http(folder,
                                 "server {\n"
                                 "  listen 80 default_server;\n"
                                 "  listen [::]:80 default_server;\n"
                                 "  listen 127.0.0.1:8081 proxy_protocol;\n"
                                 "  server_name example.com .example.org www.example.com;\n"
                                 "  root www;\n"
                                 "}\n"
                                 "server {\n"
                                 "  server_name _;\n"
                                 "  root www;\n"
                                 "}\n");
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    CHECK(
        result.has("listen = [\"0.0.0.0:80\", \"[::]:80\", { address = \"127.0.0.1:8081\", "
                   "proxy_protocol = true }]"));
    CHECK(
        result.has("names = [\"example.com\", \"example.org\", \"*.example.org\", "
                   "\"www.example.com\"]\nlisten = [\"0.0.0.0:80\", \"[::]:80\", "
                   "\"127.0.0.1:8081\"]\ndefault = true"));
    // No listen: nginx's *:80; `_` names nothing.
    CHECK(result.has("names = []\nlisten = [\"0.0.0.0:80\"]"));
    // Each table says where it came from.
    CHECK(result.has("# nginx.conf:3: server { ... }\n[[site]]"));
    CHECK(result.has("prefix = \"/\"\nroot = \"" + folder.path() + "/www\""));
}

TEST_CASE("convert: listen forms portico has no socket for are refused", "[convert]") {
    Folder folder;
    Result result = convert_http(folder,
                                 "server { listen unix:/run/nginx.sock; root www; }\n"
                                 "server { listen app.internal:80; root www; }\n"
                                 "server { listen 443 quic; root www; }\n"
                                 "server { listen 8080; root www; }\n");
    CHECK(result.refused("listen unix:/run/nginx.sock"));
    CHECK(result.refused("listen app.internal:80"));
    CHECK(result.refused("listen 443 quic"));
    CHECK(result.has("\"0.0.0.0:8080\""));
    CHECK(result.config_errors.empty());
}

TEST_CASE("convert: TLS certificates, protocols, ciphers and HTTP/2", "[convert]") {
    Folder folder;
    folder.write("cert.pem", "x");
    folder.write("key.pem", "x");
    Result result = convert_http(folder,
                                 "ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3;\n"
                                 "ssl_ciphers HIGH:!aNULL;\n"
                                 "ssl_session_cache shared:SSL:10m;\n"
                                 "server {\n"
                                 "  listen 443 ssl http2;\n"
                                 "  server_name example.com;\n"
                                 "  ssl_certificate cert.pem;\n"
                                 "  ssl_certificate_key key.pem;\n"
                                 "  root www;\n"
                                 "}\n");
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.has("listen = [\"0.0.0.0:443\"]\ncertificates = [{ cert = \"" + folder.path() +
                     "/cert.pem\", key = \"" + folder.path() + "/key.pem\" }]"));
    CHECK(result.has("protocols = [\"TLSv1.2\", \"TLSv1.3\"]"));
    CHECK(result.has("ciphers = \"HIGH:!aNULL\""));
    CHECK(result.has("[http2]\nenabled = true"));
    CHECK(result.has("certificate = { cert = "));
    CHECK(result.has("only TLSv1.2/TLSv1.3 kept"));
    CHECK(result.has("ssl_session_cache shared:SSL:10m: dropped"));
    // [server] listen stays, empty: every listener is TLS.
    CHECK(
        result.has("[server]\nmax_body_bytes = 1048576\nkeepalive_timeout = \"75s\"\nlisten = []"));
}

TEST_CASE("convert: TLS without http2 turns portico's HTTP/2 off, and a mix is refused",
          "[convert]") {
    Folder folder;
    folder.write("cert.pem", "x");
    folder.write("key.pem", "x");
    std::string tls = "ssl_certificate cert.pem; ssl_certificate_key key.pem; root www;";
    Result plain = convert_http(folder, "server { listen 443 ssl; " + tls + " }");
    CHECK(plain.has("[http2]\nenabled = false"));
    Result mixed = convert_http(folder, "server { listen 443 ssl http2; " + tls +
                                            " }\nserver { listen 8443 ssl; " + tls + " }");
    CHECK(mixed.refused("listen 443 ssl http2"));
    Result without_key = convert_http(folder,
                                      "server { listen 443 ssl; ssl_certificate cert.pem; "
                                      "root www; }");
    CHECK(without_key.refused("ssl_certificate cert.pem"));
}

TEST_CASE("convert: if ($scheme = http) around a return splits the server by listener",
          "[convert]") {
    Folder folder;
    folder.write("cert.pem", "x");
    folder.write("key.pem", "x");
    Result result = convert_http(folder,
                                 "server {\n"
                                 "  listen 80;\n"
                                 "  listen 443 ssl;\n"
                                 "  server_name example.com;\n"
                                 "  ssl_certificate cert.pem; ssl_certificate_key key.pem;\n"
                                 "  if ($scheme = http) {\n"
                                 "    return 301 https://$host$request_uri;\n"
                                 "  }\n"
                                 "  root www;\n"
                                 "}\n");
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    // The TLS listener keeps the server; the cleartext one redirects.
    CHECK(
        result.has("key.pem\" }\nlisten = [\"0.0.0.0:443\"]\n\n# nginx.conf:3: server: what "
                   "no location matches"));
    // The redirecting half needs no certificate: it answers on port 80 only.
    CHECK(
        result.has("# nginx.conf:8: if ($scheme = http) { ... }\n[[site]]\nnames = "
                   "[\"example.com\"]\nlisten = [\"0.0.0.0:80\"]\n\n# nginx.conf:9: return 301"));
    CHECK(result.has("redirect = { to = \"https://$host$request_uri\", status = 301 }"));
}

TEST_CASE("convert: if ($host = NAME) around a return gives that name its own site", "[convert]") {
    Folder folder;
    Result result = convert_http(folder,
                                 "server {\n"
                                 "  listen 80;\n"
                                 "  server_name example.com www.example.com;\n"
                                 "  if ($host = www.example.com) {\n"
                                 "    return 301 http://example.com$request_uri;\n"
                                 "  }\n"
                                 "  root www;\n"
                                 "}\n");
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.config_errors.empty());
    CHECK(result.has("names = [\"example.com\"]"));
    CHECK(result.has("names = [\"www.example.com\"]"));
    CHECK(result.has("redirect = { to = \"http://example.com$request_uri\", status = 301 }"));
    Result other = convert_http(folder,
                                "server { server_name a.test; if ($host = b.test) "
                                "{ return 301 http://a.test; } root www; }");
    CHECK(other.refused("if ($host = b.test)"));
    Result complex = convert_http(folder,
                                  "server { if ($request_method = POST) { return 405; } "
                                  "root www; }");
    CHECK(complex.refused("if ($request_method = POST)"));
}

TEST_CASE("convert: a server-level return answers every path", "[convert]") {
    Folder folder;
    Result result = convert_http(folder,
                                 "server { listen 80; server_name old.test;\n"
                                 "  return 301 https://new.test$request_uri;\n"
                                 "  location /x/ { root www; } }");
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(
        result.has("prefix = \"/\"\nredirect = { to = \"https://new.test$request_uri\", "
                   "status = 301 }"));
    CHECK(result.has("dropped: the server-level return answers before any location"));
    CHECK_FALSE(result.has("prefix = \"/x/\""));
}

TEST_CASE("convert: body size, keep-alive, logs and real IP are portico's once", "[convert]") {
    Folder folder;
    Result result = convert_http(folder,
                                 "client_max_body_size 10m;\n"
                                 "keepalive_timeout 65;\n"
                                 "access_log /var/log/nginx/access.log;\n"
                                 "error_log /var/log/nginx/error.log warn;\n"
                                 "set_real_ip_from 10.0.0.0/8;\n"
                                 "set_real_ip_from 127.0.0.1;\n"
                                 "real_ip_header X-Forwarded-For;\n"
                                 "real_ip_recursive on;\n"
                                 "server { root www; location /upload/ { client_max_body_size 1g; "
                                 "root www; } }");
    INFO(result.toml);
    CHECK(result.has("max_body_bytes = 10485760"));
    CHECK(result.has("keepalive_timeout = \"65s\""));
    CHECK(result.has("trusted_proxies = [\"10.0.0.0/8\", \"127.0.0.1\"]"));
    CHECK(result.has("access = \"/var/log/nginx/access.log\""));
    CHECK(result.has("error = \"/var/log/nginx/error.log\"\nlevel = \"warn\""));
    // portico has one body limit: the location's own is refused.
    CHECK(result.refused("client_max_body_size 1g"));
    CHECK(result.config_errors.empty());

    Result refused = convert_http(folder,
                                  "access_log /var/log/a.log main;\n"
                                  "real_ip_header X-Real-IP;\nserver { root www; }");
    CHECK(refused.refused("access_log /var/log/a.log main"));
    CHECK(refused.refused("real_ip_header X-Real-IP"));
    // client_max_body_size 0 is nginx's "no limit".
    Result unlimited = convert_http(folder, "client_max_body_size 0;\nserver { root www; }");
    CHECK(unlimited.has("max_body_bytes = 9223372036854775807"));
}

TEST_CASE("convert: top-level directives", "[convert]") {
    Folder folder;
    Result result = convert_file_text(folder,
                                      "user www-data;\nworker_processes 4;\n"
                                      "worker_rlimit_nofile 65535;\npid /run/nginx.pid;\n"
                                      "events { worker_connections 1024; multi_accept on; }\n"
                                      "http { server { root www; } }\n");
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.has("user = \"www-data\""));
    CHECK(result.has("workers = 4"));
    CHECK(result.has("# nginx.conf:3: worker_rlimit_nofile 65535: dropped"));
    CHECK(result.has("# nginx.conf:5: events: dropped"));
    Result stream = convert_file_text(folder, "stream { }\nhttp { server { root www; } }\n");
    CHECK(stream.refused("stream"));
    Result nothing = convert_file_text(folder, "events {}\n");
    CHECK(nothing.toml.empty());
    CHECK(nothing.error == "no http block: nothing to translate");
}

}  // namespace convert_server_test
