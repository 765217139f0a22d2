#include "cli/metrics_client.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/unique_fd.hpp"

namespace portico::cli {

using nlohmann::json;

namespace {

constexpr int timeout_ms = 2000;
constexpr const char* hint = " — is [metrics] listen set and portico running?";

// Connects within timeout_ms: a non-blocking connect waited on with poll,
// since a blocking connect() to a dropped SYN would hang for minutes.
core::UniqueFd connect_to(const MetricsUrl& url, std::string& error) {
    core::UniqueFd fd(
        ::socket(url.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
        error = std::string("socket: ") + std::strerror(errno);
        return {};
    }
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&url.address), url.length) != 0) {
        if (errno != EINPROGRESS) {
            error = "cannot reach " + url.text + ": " + std::strerror(errno) + hint;
            return {};
        }
        pollfd ready{.fd = fd.get(), .events = POLLOUT, .revents = 0};
        int polled = ::poll(&ready, 1, timeout_ms);
        if (polled <= 0) {
            error = "cannot reach " + url.text + ": " +
                    (polled == 0 ? std::string("no answer within 2 s") : std::strerror(errno)) +
                    hint;
            return {};
        }
        int failure = 0;
        socklen_t size = sizeof failure;
        ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &failure, &size);
        if (failure != 0) {
            error = "cannot reach " + url.text + ": " + std::strerror(failure) + hint;
            return {};
        }
    }
    // From here on a plain blocking socket, each send and recv bounded.
    ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
    timeval limit{.tv_sec = timeout_ms / 1000, .tv_usec = 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    return fd;
}

// A chunked body, once all of it is there; nullopt while it is not (or if
// it is malformed, which then shows up at EOF as "incomplete").
std::optional<std::string> dechunk(std::string_view body) {
    std::string out;
    size_t at = 0;
    for (;;) {
        size_t line_end = body.find("\r\n", at);
        if (line_end == std::string_view::npos) return std::nullopt;
        std::string size_text(body.substr(at, line_end - at));
        char* end = nullptr;
        unsigned long size = std::strtoul(size_text.c_str(), &end, 16);
        if (end == size_text.c_str()) return std::nullopt;
        at = line_end + 2;
        if (size == 0) return out;  // trailers, if any, are of no interest
        if (body.size() < at + size + 2) return std::nullopt;
        out.append(body.substr(at, size));
        at += size + 2;
    }
}

struct Response {
    int status = 0;
    std::string reason;
    std::string body;
};

// Splits head and body; true once the body is complete (Content-Length,
// chunked, or EOF for neither).
bool parse_response(const std::string& raw, bool at_eof, Response& response) {
    size_t head_end = raw.find("\r\n\r\n");
    if (head_end == std::string::npos) return false;
    std::string head = raw.substr(0, head_end);
    std::string_view body = std::string_view(raw).substr(head_end + 4);
    // HTTP/1.1 200 OK
    if (head.size() < 12 || head.rfind("HTTP/1.", 0) != 0) return false;
    response.status = std::atoi(head.c_str() + 9);
    size_t line_end = head.find("\r\n");
    response.reason =
        head.size() > 13
            ? head.substr(13, line_end == std::string::npos ? std::string::npos : line_end - 13)
            : "";
    std::optional<size_t> content_length;
    bool chunked = false;
    for (size_t at = line_end; at != std::string::npos && at < head.size();) {
        size_t start = at + 2, end = head.find("\r\n", start);
        std::string line =
            head.substr(start, end == std::string::npos ? std::string::npos : end - start);
        std::string lower = line;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return std::tolower(c); });
        if (lower.rfind("content-length:", 0) == 0)
            content_length = std::strtoull(line.c_str() + 15, nullptr, 10);
        else if (lower.rfind("transfer-encoding:", 0) == 0 &&
                 lower.find("chunked") != std::string::npos)
            chunked = true;
        at = end;
    }
    if (chunked) {
        std::optional<std::string> whole = dechunk(body);
        if (!whole) return false;
        response.body = std::move(*whole);
        return true;
    }
    if (content_length) {
        if (body.size() < *content_length) return false;
        response.body = std::string(body.substr(0, *content_length));
        return true;
    }
    if (!at_eof) return false;
    response.body = std::string(body);
    return true;
}

std::optional<Response> fetch(const MetricsUrl& url, std::string& error) {
    core::UniqueFd fd = connect_to(url, error);
    if (!fd) return std::nullopt;
    std::string request = "GET " + url.path + " HTTP/1.1\r\nHost: " + url.host +
                          "\r\nAccept: application/json\r\nUser-Agent: portico-stats\r\n"
                          "Connection: close\r\n\r\n";
    for (size_t sent = 0; sent < request.size();) {
        ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
        if (n < 0) {
            error = "cannot send to " + url.text + ": " +
                    (errno == EAGAIN ? std::string("timed out after 2 s") : std::strerror(errno));
            return std::nullopt;
        }
        sent += static_cast<size_t>(n);
    }
    std::string raw;
    Response response;
    for (;;) {
        char buffer[16384];
        ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, 0);
        if (n < 0) {
            error = url.text + ": " +
                    (errno == EAGAIN ? std::string("no answer within 2 s") : std::strerror(errno));
            return std::nullopt;
        }
        raw.append(buffer, static_cast<size_t>(n));
        if (parse_response(raw, n == 0, response)) break;
        if (n == 0) {
            error = url.text + ": the connection closed before a whole HTTP response arrived" +
                    " — is that portico's [metrics] listen address?";
            return std::nullopt;
        }
    }
    return response;
}

}  // namespace

MetricsUrl MetricsUrl::at(std::string_view suffix) const {
    MetricsUrl url = *this;
    url.path += suffix;
    url.text += suffix;
    return url;
}

// http://HOST[:PORT][/PATH] with HOST an IPv4 literal, [IPv6] or localhost:
// the metrics listener is configured with an address, so no DNS is needed.
// PATH defaults to /stats, and /stats is added to one that lacks it.
std::optional<MetricsUrl> parse_metrics_url(const std::string& text, std::string& error) {
    const std::string scheme = "http://";
    if (text.rfind(scheme, 0) != 0) {
        error = "--url '" + text +
                "': only http://HOST:PORT is supported (the metrics listener speaks plain HTTP)";
        return std::nullopt;
    }
    std::string rest = text.substr(scheme.size());
    size_t slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    std::string path = slash == std::string::npos ? "" : rest.substr(slash);
    while (!path.empty() && path.back() == '/') path.pop_back();
    if (path.size() < 6 || path.compare(path.size() - 6, 6, "/stats") != 0) path += "/stats";

    std::string host, port = "80";
    if (!authority.empty() && authority[0] == '[') {
        size_t close = authority.find(']');
        if (close == std::string::npos) {
            error = "--url '" + text + "': missing ']' after the IPv6 address";
            return std::nullopt;
        }
        host = authority.substr(1, close - 1);
        if (close + 1 < authority.size()) {
            if (authority[close + 1] != ':') {
                error = "--url '" + text + "': expected ':PORT' after ']'";
                return std::nullopt;
            }
            port = authority.substr(close + 2);
        }
    } else {
        size_t colon = authority.rfind(':');
        host = authority.substr(0, colon);
        if (colon != std::string::npos) port = authority.substr(colon + 1);
    }
    char* end = nullptr;
    unsigned long number = std::strtoul(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || number == 0 || number > 65535) {
        error = "--url '" + text + "': port '" + port + "' is not a number 1..65535";
        return std::nullopt;
    }

    MetricsUrl url;
    url.host = authority;
    url.path = path;
    url.text = scheme + authority + path;
    auto port_be = htons(static_cast<uint16_t>(number));
    std::string literal = host == "localhost" ? "127.0.0.1" : host;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&url.address);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&url.address);
    if (inet_pton(AF_INET, literal.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = port_be;
        url.length = sizeof(sockaddr_in);
    } else if (inet_pton(AF_INET6, literal.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = port_be;
        url.length = sizeof(sockaddr_in6);
    } else {
        error = "--url '" + text + "': host '" + host +
                "' is not an IP address or localhost (use the [metrics] listen address)";
        return std::nullopt;
    }
    return url;
}

std::optional<json> read_json_object(const MetricsUrl& url, std::string& error) {
    std::optional<Response> response = fetch(url, error);
    if (!response) return std::nullopt;
    if (response->status != 200) {
        error = url.text + " answered " + std::to_string(response->status) + " " + response->reason;
        // portico says what was wrong on the first line ("404 Not Found: no
        // snapshot named 'x'"); anything else is likely not the listener.
        std::string said = response->body.substr(0, response->body.find('\n'));
        std::string status_line = std::to_string(response->status) + " " + response->reason + ": ";
        if (said.rfind(status_line, 0) == 0) said.erase(0, status_line.size());
        error += said.empty() ? " — is that portico's [metrics] listen address?" : ": " + said;
        return std::nullopt;
    }
    json document = json::parse(response->body, nullptr, false);
    if (document.is_discarded() || !document.is_object()) {
        error = url.text +
                " did not return a JSON object — is that portico's [metrics] listen address?";
        return std::nullopt;
    }
    return document;
}

}  // namespace portico::cli
