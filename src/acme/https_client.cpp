#include "acme/https_client.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>

#include "core/unique_fd.hpp"
#include "tls/openssl_error.hpp"

namespace portico::acme {

namespace {

using Clock = std::chrono::steady_clock;

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

int remaining_ms(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return static_cast<int>(std::max<int64_t>(0, left.count()));
}

// Waits until `fd` is ready for `events` or the deadline passes.
bool wait_for(int fd, short events, Clock::time_point deadline) {
    pollfd entry{fd, events, 0};
    for (;;) {
        int ready = ::poll(&entry, 1, remaining_ms(deadline));
        if (ready > 0) return true;
        if (ready == 0 || errno != EINTR) return false;
    }
}

// A non-blocking socket connected to `url`'s host, or an empty one.
core::UniqueFd connect_to(const Url& url, Clock::time_point deadline, std::string& error) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (int status = ::getaddrinfo(url.host.c_str(), url.port.c_str(), &hints, &found);
        status != 0) {
        error = "cannot resolve " + url.host + ": " + gai_strerror(status);
        return {};
    }
    core::UniqueFd fd;
    error = "cannot connect to " + url.host + ":" + url.port;
    for (addrinfo* address = found; address && !fd; address = address->ai_next) {
        core::UniqueFd attempt(
            ::socket(address->ai_family, address->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        if (!attempt) continue;
        if (::connect(attempt.get(), address->ai_addr, address->ai_addrlen) != 0 &&
            errno != EINPROGRESS)
            continue;
        int status = 0;
        socklen_t length = sizeof status;
        if (!wait_for(attempt.get(), POLLOUT, deadline)) {
            error += ": timed out";
            break;
        }
        ::getsockopt(attempt.get(), SOL_SOCKET, SO_ERROR, &status, &length);
        if (status != 0) {
            error += std::string(": ") + std::strerror(status);
            continue;
        }
        fd = std::move(attempt);
    }
    ::freeaddrinfo(found);
    return fd;
}

// Runs `step` (an SSL_* call) until it is done, waiting on the socket as
// OpenSSL asks; its result, or -1 after the deadline.
template <typename Step>
int run_ssl(SSL* ssl, int fd, Clock::time_point deadline, Step step) {
    for (;;) {
        int result = step();
        if (result > 0) return result;
        int reason = SSL_get_error(ssl, result);
        if (reason == SSL_ERROR_ZERO_RETURN) return 0;
        short events = reason == SSL_ERROR_WANT_READ    ? POLLIN
                       : reason == SSL_ERROR_WANT_WRITE ? POLLOUT
                                                        : 0;
        if (events == 0 || !wait_for(fd, events, deadline)) return -1;
    }
}

size_t parse_size(std::string_view text, int base) {
    size_t value = 0;
    auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    return status == std::errc() ? value : SIZE_MAX;
}

}  // namespace

std::string HttpResponse::header(std::string_view name) const {
    for (const auto& [key, value] : headers)
        if (key == name) return value;
    return {};
}

namespace {

// "SCHEME://host[:port]/path" into `out` (whose port is the scheme's default).
bool parse_url(std::string_view url, std::string_view scheme, Url& out) {
    if (!url.starts_with(scheme)) return false;
    url.remove_prefix(scheme.size());
    size_t slash = url.find('/');
    std::string_view authority = url.substr(0, slash);
    out.path = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
    size_t colon = authority.rfind(':');
    if (colon != std::string_view::npos && authority.find(']', colon) == std::string_view::npos) {
        out.port = std::string(authority.substr(colon + 1));
        authority = authority.substr(0, colon);
    }
    if (authority.starts_with('[') && authority.ends_with(']'))
        authority = authority.substr(1, authority.size() - 2);
    out.host = std::string(authority);
    return !out.host.empty() && !out.port.empty();
}

}  // namespace

bool parse_https_url(std::string_view url, Url& out) {
    out = Url{};
    return parse_url(url, "https://", out);
}

bool parse_http_url(std::string_view url, Url& out) {
    out = Url{};
    out.port = "80";
    out.tls = false;
    return parse_url(url, "http://", out);
}

bool parse_http_response(std::string_view bytes, HttpResponse& out, bool has_body) {
    size_t head_end = bytes.find("\r\n\r\n");
    if (head_end == std::string_view::npos || !bytes.starts_with("HTTP/1.")) return false;
    std::string_view head = bytes.substr(0, head_end);
    std::string_view rest = bytes.substr(head_end + 4);
    size_t line_end = head.find("\r\n");
    std::string_view status_line = head.substr(0, line_end);
    if (status_line.size() < 12) return false;
    out.status = static_cast<int>(parse_size(status_line.substr(9, 3), 10));
    if (out.status < 100 || out.status > 599) return false;
    out.headers.clear();
    while (line_end != std::string_view::npos) {
        head.remove_prefix(line_end + 2);
        line_end = head.find("\r\n");
        std::string_view line = head.substr(0, line_end);
        size_t colon = line.find(':');
        if (colon == std::string_view::npos) return false;
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
            value.remove_prefix(1);
        while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
            value.remove_suffix(1);
        out.headers.emplace_back(lower(line.substr(0, colon)), std::string(value));
    }
    out.body.clear();
    if (!has_body) return true;
    if (lower(out.header("transfer-encoding")) == "chunked") {
        for (;;) {
            size_t size_end = rest.find("\r\n");
            if (size_end == std::string_view::npos) return false;
            std::string_view size_text = rest.substr(0, size_end);
            size_text = size_text.substr(0, size_text.find(';'));
            size_t size = parse_size(size_text, 16);
            if (size == SIZE_MAX || rest.size() - size_end - 2 < size) return false;
            if (size == 0) return true;
            out.body.append(rest.substr(size_end + 2, size));
            rest.remove_prefix(size_end + 2 + size);
            if (!rest.starts_with("\r\n")) return false;
            rest.remove_prefix(2);
        }
    }
    if (std::string length = out.header("content-length"); !length.empty()) {
        size_t size = parse_size(length, 10);
        if (size == SIZE_MAX || rest.size() < size) return false;
        rest = rest.substr(0, size);
    }
    out.body.assign(rest);
    return true;
}

HttpsClient::HttpsClient(const std::string& ca_root, std::chrono::milliseconds timeout)
    : timeout_(timeout) {
    context_ = SSL_CTX_new(TLS_client_method());
    if (!context_) {
        setup_error_ = "cannot create a TLS context: " + tls::take_openssl_errors();
        return;
    }
    SSL_CTX_set_min_proto_version(context_, TLS1_2_VERSION);
    SSL_CTX_set_verify(context_, SSL_VERIFY_PEER, nullptr);
    int loaded = ca_root.empty()
                     ? SSL_CTX_set_default_verify_paths(context_)
                     : SSL_CTX_load_verify_locations(context_, ca_root.c_str(), nullptr);
    if (loaded != 1)
        setup_error_ = "cannot load the trusted roots " + (ca_root.empty() ? "" : ca_root + " ") +
                       ": " + tls::take_openssl_errors();
}

HttpsClient::~HttpsClient() {
    SSL_CTX_free(context_);
}

bool HttpsClient::request(std::string_view method, const std::string& url, const std::string& body,
                          std::string_view content_type, HttpResponse& out, std::string& error) {
    Url where;
    if (!parse_https_url(url, where)) {
        error = "not an https URL: " + url;
        return false;
    }
    return exchange(method, where, body, content_type, out, error);
}

bool HttpsClient::request_http_or_https(std::string_view method, const std::string& url,
                                        const std::string& body, std::string_view content_type,
                                        HttpResponse& out, std::string& error) {
    Url where;
    if (!parse_https_url(url, where) && !parse_http_url(url, where)) {
        error = "not an http:// or https:// URL: " + url;
        return false;
    }
    return exchange(method, where, body, content_type, out, error);
}

bool HttpsClient::exchange(std::string_view method, const Url& where, const std::string& body,
                           std::string_view content_type, HttpResponse& out, std::string& error) {
    if (!setup_error_.empty() && where.tls) {
        error = setup_error_;
        return false;
    }
    Clock::time_point deadline = Clock::now() + timeout_;
    core::UniqueFd fd = connect_to(where, deadline, error);
    if (!fd) return false;
    std::unique_ptr<SSL, decltype(&SSL_free)> ssl(nullptr, SSL_free);
    if (where.tls && !start_tls(where, fd.get(), deadline, ssl, error)) return false;
    // One write or read, through TLS or not, waiting as the socket asks;
    // 0 at the end, -1 on an error or after the deadline.
    auto write_some = [&](const char* data, size_t size) {
        if (ssl)
            return run_ssl(ssl.get(), fd.get(), deadline,
                           [&] { return SSL_write(ssl.get(), data, static_cast<int>(size)); });
        for (;;) {
            ssize_t n = ::send(fd.get(), data, size, MSG_NOSIGNAL);
            if (n >= 0) return static_cast<int>(n);
            if ((errno != EAGAIN && errno != EINTR) || !wait_for(fd.get(), POLLOUT, deadline))
                return -1;
        }
    };
    auto read_some = [&](char* data, size_t size) {
        if (ssl)
            return run_ssl(ssl.get(), fd.get(), deadline,
                           [&] { return SSL_read(ssl.get(), data, static_cast<int>(size)); });
        for (;;) {
            ssize_t n = ::recv(fd.get(), data, size, 0);
            if (n >= 0) return static_cast<int>(n);
            if ((errno != EAGAIN && errno != EINTR) || !wait_for(fd.get(), POLLIN, deadline))
                return -1;
        }
    };
    std::string default_port = where.tls ? "443" : "80";
    std::string text = std::string(method) + " " + where.path + " HTTP/1.1\r\nHost: " + where.host +
                       (where.port == default_port ? "" : ":" + where.port) +
                       "\r\nUser-Agent: portico-acme\r\nAccept: */*\r\nConnection: close\r\n";
    if (!content_type.empty()) text += "Content-Type: " + std::string(content_type) + "\r\n";
    if (method == "POST") text += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    text += "\r\n" + body;
    for (size_t sent = 0; sent < text.size();) {
        int n = write_some(text.data() + sent, text.size() - sent);
        if (n <= 0) {
            error = "cannot send to " + where.host + ": " +
                    (remaining_ms(deadline) == 0 ? "timed out" : "connection closed");
            return false;
        }
        sent += static_cast<size_t>(n);
    }
    constexpr size_t max_response = 1 << 20;  // a certificate chain is a few KiB
    std::string received;
    char buffer[16 * 1024];
    for (;;) {
        int n = read_some(buffer, sizeof buffer);
        if (n <= 0) break;
        received.append(buffer, static_cast<size_t>(n));
        if (received.size() > max_response) break;
        if (method == "HEAD" && received.find("\r\n\r\n") != std::string::npos) break;
    }
    tls::clear_openssl_errors();
    if (!parse_http_response(received, out, method != "HEAD")) {
        error = received.empty() ? "no answer from " + where.host + ":" + where.port +
                                       (remaining_ms(deadline) == 0 ? " (timed out)" : "")
                                 : "not an HTTP response from " + where.host + ":" + where.port;
        return false;
    }
    return true;
}

bool HttpsClient::start_tls(const Url& where, int fd,
                            std::chrono::steady_clock::time_point deadline,
                            std::unique_ptr<SSL, decltype(&SSL_free)>& ssl, std::string& error) {
    ssl.reset(SSL_new(context_));
    if (!ssl || SSL_set_fd(ssl.get(), fd) != 1) {
        error = "cannot start TLS: " + tls::take_openssl_errors();
        return false;
    }
    bool literal = where.host.find_first_not_of("0123456789.") == std::string::npos ||
                   where.host.find(':') != std::string::npos;
    if (!literal) SSL_set_tlsext_host_name(ssl.get(), where.host.c_str());
    if (literal ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl.get()), where.host.c_str()) != 1
                : SSL_set1_host(ssl.get(), where.host.c_str()) != 1) {
        error = "cannot check the name " + where.host;
        return false;
    }
    if (run_ssl(ssl.get(), fd, deadline, [&] { return SSL_connect(ssl.get()); }) <= 0) {
        long verified = SSL_get_verify_result(ssl.get());
        error = "TLS handshake with " + where.host + ":" + where.port + " failed: " +
                (verified != X509_V_OK         ? X509_verify_cert_error_string(verified)
                 : remaining_ms(deadline) == 0 ? "timed out"
                                               : tls::take_openssl_errors());
        tls::clear_openssl_errors();
        return false;
    }
    return true;
}

}  // namespace portico::acme
