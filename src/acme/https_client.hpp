// The ACME process's HTTPS (and, for OCSP, HTTP) client: one request per connection, blocking,
// every step bounded by a deadline (connect, handshake, each read and
// write, and the whole exchange). It runs in the ACME process, which serves
// no traffic, so blocking there never delays a worker or the master.
#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace portico::acme {

// "http[s]://host[:port]/path" split.
struct Url {
    std::string host;
    std::string port = "443";
    std::string path = "/";
    bool tls = true;  // https
};

struct HttpResponse {
    int status = 0;
    std::vector<std::pair<std::string, std::string>> headers;  // names lower case
    std::string body;
    // The first value of `name` (lower case), or "".
    std::string header(std::string_view name) const;
};

class HttpsClient {
public:
    // `ca_root`: a PEM file of trusted roots; empty: the system's store.
    HttpsClient(const std::string& ca_root, std::chrono::milliseconds timeout);
    ~HttpsClient();
    HttpsClient(const HttpsClient&) = delete;
    HttpsClient& operator=(const HttpsClient&) = delete;

    // false with `error` set when no HTTP response came (unreachable,
    // certificate refused, timed out, not HTTP); a response of any status
    // is true.
    bool request(std::string_view method, const std::string& url, const std::string& body,
                 std::string_view content_type, HttpResponse& out, std::string& error);
    // The same to an http:// URL too (OCSP responders: RFC 6960 A.1 is
    // over HTTP, the response being signed).
    bool request_http_or_https(std::string_view method, const std::string& url,
                               const std::string& body, std::string_view content_type,
                               HttpResponse& out, std::string& error);

private:
    bool exchange(std::string_view method, const Url& where, const std::string& body,
                  std::string_view content_type, HttpResponse& out, std::string& error);
    bool start_tls(const Url& where, int fd, std::chrono::steady_clock::time_point deadline,
                   std::unique_ptr<SSL, decltype(&SSL_free)>& ssl, std::string& error);

    SSL_CTX* context_ = nullptr;
    std::chrono::milliseconds timeout_;
    std::string setup_error_;
};

// false when `url` is not an https:// (http://) URL.
bool parse_https_url(std::string_view url, Url& out);
bool parse_http_url(std::string_view url, Url& out);

// A complete HTTP/1.1 response (head, and a body by Content-Length, chunked
// or up to the close; none for a HEAD's) parsed from `bytes`; false when it
// is not one.
bool parse_http_response(std::string_view bytes, HttpResponse& out, bool has_body = true);

}  // namespace portico::acme
