// auth = { realm, htpasswd, forward }: Basic authentication with the real
// binary (2 workers) in front of a real upstream, over HTTP/1.1 and HTTP/2.
// The htpasswd lines are made by the tools operators use: Apache's
// htpasswd (bcrypt, apr1) and openssl passwd (SHA-256 and SHA-512 crypt).
#include <poll.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http2_support.hpp"
#include "proxy_support.hpp"
#include "upstream_server.hpp"

using namespace portico::test;

// Its own namespace: in a unity build the test files share one translation
// unit, and their helpers must not meet.
namespace basic_auth_test {

namespace {

enum class Protocol { http1, http2 };

// What a command printed, its last line break removed.
std::string output_of(const std::string& command) {
    std::string out;
    FILE* pipe = ::popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    char buffer[256];
    while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
    REQUIRE(::pclose(pipe) == 0);
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out;
}

std::string base64(const std::string& bytes) {
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (size_t i = 0; i < bytes.size(); i += 3) {
        uint32_t group = static_cast<uint8_t>(bytes[i]) << 16;
        if (i + 1 < bytes.size()) group |= static_cast<uint8_t>(bytes[i + 1]) << 8;
        if (i + 2 < bytes.size()) group |= static_cast<uint8_t>(bytes[i + 2]);
        out += alphabet[group >> 18 & 63];
        out += alphabet[group >> 12 & 63];
        out += i + 1 < bytes.size() ? alphabet[group >> 6 & 63] : '=';
        out += i + 2 < bytes.size() ? alphabet[group & 63] : '=';
    }
    return out;
}

std::string basic(const std::string& user, const std::string& password) {
    return "Basic " + base64(user + ":" + password);
}

// One line per hash kind, each user's password being "pw-" + the user;
// made once (bcrypt takes its time).
const std::string& users_file() {
    static const std::string text = output_of("htpasswd -nbB -C 5 bcrypt pw-bcrypt") + "\n" +
                                    output_of("htpasswd -nbm apr1 pw-apr1") + "\n" +
                                    "sha512:" + output_of("openssl passwd -6 pw-sha512") + "\n" +
                                    "sha256:" + output_of("openssl passwd -5 pw-sha256") + "\n";
    return text;
}

const std::vector<std::string> kinds = {"bcrypt", "apr1", "sha512", "sha256"};

// The realm holds both characters a quoted-string escapes.
constexpr const char* challenge = R"(Basic realm="Staff \"only\" \\ area")";

// Logged at debug level: the worker's line for each hash it starts.
std::string auth_config(const std::string& upstream, const std::string& users) {
    return "[server]\nlisten = [\"{listen}\"]\nworkers = 2\n[log]\nlevel = \"debug\"\n"
           "[http2]\ncleartext = true\n"
           "[upstream.app]\nservers = [\"" +
           upstream +
           "\"]\n"
           "[[location]]\nprefix = \"/private/\"\nproxy = \"app\"\n"
           "auth = { realm = 'Staff \"only\" \\ area', htpasswd = \"" +
           users +
           "\" }\n"
           "[[location]]\nprefix = \"/forwarded/\"\nproxy = \"app\"\n"
           "auth = { realm = \"app\", htpasswd = \"" +
           users +
           "\", forward = true }\n"
           "[[location]]\nprefix = \"/\"\nproxy = \"app\"\n";
}

struct Answer {
    int status = 0;
    std::map<std::string, std::string> headers;
    std::string body;
    std::string header(const std::string& name) const {
        auto found = headers.find(name);
        return found == headers.end() ? "" : found->second;
    }
};

// GET `target` on a new connection, with this Authorization (none if empty).
std::optional<Answer> get(Protocol protocol, uint16_t port, const std::string& target,
                          const std::string& authorization) {
    Answer answer;
    if (protocol == Protocol::http1) {
        std::string lines = authorization.empty() ? "" : "Authorization: " + authorization + "\r\n";
        auto response = proxy_fetch(port, get_request(target, lines));
        if (!response) return std::nullopt;
        answer.status = response->status;
        answer.headers = response->headers;
        answer.body = response->body;
        return answer;
    }
    h2::Client client(port);
    h2::Fields extra;
    if (!authorization.empty()) extra.push_back({"authorization", authorization});
    uint32_t id = client.get(target, extra, "GET", "front.example");
    if (!client.wait_stream(id)) return std::nullopt;
    const h2::StreamResult& result = client.result(id);
    answer.status = result.status;
    for (const auto& [name, value] : result.headers) answer.headers.emplace(name, value);
    answer.body = result.body;
    return answer;
}

// The upstream, the htpasswd file (written first: the config names it)
// and portico.
struct Setup {
    UpstreamServer upstream;
    TempDir files;
    std::string users = files.write("users", users_file());
    Portico portico{auth_config(upstream.address(), users)};
};

}  // namespace

TEST_CASE("auth: each hash kind's right password passes, and the upstream never sees it",
          "[auth]") {
    Setup setup;
    UpstreamServer& upstream = setup.upstream;
    Portico& portico = setup.portico;
    for (Protocol protocol : {Protocol::http1, Protocol::http2}) {
        for (const std::string& kind : kinds) {
            INFO("protocol " << (protocol == Protocol::http1 ? "HTTP/1.1" : "HTTP/2") << ", "
                             << kind);
            size_t before = upstream.request_count();
            // Twice: the second answer is the remembered one.
            for (int time = 0; time < 2; ++time) {
                auto answer =
                    get(protocol, portico.port(), "/private/" + kind, basic(kind, "pw-" + kind));
                REQUIRE(answer);
                CHECK(answer->status == 200);
                CHECK(answer->body == "ok /private/" + kind);
            }
            REQUIRE(upstream.request_count() == before + 2);
            const ReceivedRequest received = upstream.requests().back();
            CHECK_FALSE(received.has("authorization"));
        }
    }
}

TEST_CASE(
    "auth: every wrong or malformed Authorization is the same 401, and nothing reaches "
    "the upstream",
    "[auth]") {
    Setup setup;
    const std::vector<std::pair<std::string, std::string>> refused = {
        {"no header", ""},
        {"a wrong password", basic("bcrypt", "pw-apr1")},
        {"a wrong password, sha-crypt", basic("sha512", "pw-sha51")},
        {"a wrong password, apr1", basic("apr1", "")},
        {"an unknown user", basic("nobody", "pw-bcrypt")},
        {"another scheme", "Bearer " + base64("bcrypt:pw-bcrypt")},
        {"bad base64", "Basic YmNyeXB0On!3LWJjcnlwdA=="},
        {"no colon", "Basic " + base64("bcrypt")},
        {"a NUL byte in the password", basic("bcrypt", std::string("pw-bcrypt\0x", 11))},
        {"huge", "Basic " + base64(std::string(3000, 'u') + ":pw")},
    };
    for (Protocol protocol : {Protocol::http1, Protocol::http2}) {
        for (const auto& [what, authorization] : refused) {
            INFO("protocol " << (protocol == Protocol::http1 ? "HTTP/1.1" : "HTTP/2") << ", "
                             << what);
            size_t before = setup.upstream.request_count();
            auto answer = get(protocol, setup.portico.port(), "/private/x", authorization);
            REQUIRE(answer);
            CHECK(answer->status == 401);
            CHECK(answer->header("www-authenticate") == challenge);
            CHECK(setup.upstream.request_count() == before);
            // The next client is served.
            auto next = get(protocol, setup.portico.port(), "/private/y", basic("apr1", "pw-apr1"));
            REQUIRE(next);
            CHECK(next->status == 200);
        }
    }
}

TEST_CASE("auth: the 401's head, byte for byte, and a HEAD request's", "[auth]") {
    Setup setup;
    for (const std::string method : {"GET", "HEAD"}) {
        Client client(setup.portico.port());
        client.send(method + " /private/ HTTP/1.1\r\nHost: a\r\nAuthorization: " +
                    basic("bcrypt", "wrong") + "\r\n\r\n");
        auto response = client.read_response(5s, method == "HEAD");
        REQUIRE(response);
        INFO(response->head);
        CHECK(response->head.starts_with("HTTP/1.1 401 Unauthorized\r\n"));
        CHECK(contains(response->head, "\r\nWWW-Authenticate: " + std::string(challenge) + "\r\n"));
        CHECK(response->header("content-type") == "text/plain; charset=utf-8");
        CHECK(response->header("content-length") == "17");
        CHECK(response->body == (method == "HEAD" ? "" : "401 Unauthorized\n"));
        // The connection stays open for the next request.
        client.send("GET /private/ HTTP/1.1\r\nHost: a\r\nAuthorization: " +
                    basic("sha256", "pw-sha256") + "\r\n\r\n");
        auto next = client.read_response();
        REQUIRE(next);
        CHECK(next->status == 200);
    }
}

TEST_CASE("auth: forward = true sends the client's Authorization upstream", "[auth]") {
    Setup setup;
    for (Protocol protocol : {Protocol::http1, Protocol::http2}) {
        auto answer =
            get(protocol, setup.portico.port(), "/forwarded/x", basic("sha256", "pw-sha256"));
        REQUIRE(answer);
        CHECK(answer->status == 200);
        REQUIRE(setup.upstream.request_count() > 0);
        CHECK(setup.upstream.requests().back().header("authorization") ==
              basic("sha256", "pw-sha256"));
    }
}

TEST_CASE(
    "auth: requests with the same credentials share one hash, and a location without "
    "auth is served meanwhile",
    "[auth]") {
    // bcrypt at cost 11: a few hundred milliseconds a hash. Eight requests
    // at once with the same credentials, over both workers: each worker
    // computes at most 2 hashes at a time and answers 503 beyond, so eight
    // hashes would bring 503s; one hash per worker brings none. The
    // workers' debug lines count the hashes started.
    UpstreamServer upstream;
    TempDir files;
    std::string users = files.write("users", output_of("htpasswd -nbB -C 11 slow pw-slow") + "\n");
    Portico portico(auth_config(upstream.address(), users));
    const std::string hash_line = "computing the password hash of user 'slow'";
    size_t counted = 0;  // the workers' hash lines before this round
    for (const std::string& password : {std::string("wrong"), std::string("pw-slow")}) {
        INFO("password " << password);
        std::vector<std::unique_ptr<Client>> clients;
        for (int i = 0; i < 8; ++i) clients.push_back(std::make_unique<Client>(portico.port()));
        for (auto& client : clients)
            client->send(
                get_request("/private/slow", "Authorization: " + basic("slow", password) + "\r\n"));
        // The loops are free while the hashes run: a location without
        // auth is answered before any of them is done.
        auto open = get(Protocol::http1, portico.port(), "/open", "");
        REQUIRE(open);
        CHECK(open->status == 200);
        int answered = 0;
        for (auto& client : clients) {
            pollfd ready{client->fd(), POLLIN, 0};
            answered += ::poll(&ready, 1, 0);
        }
        CHECK(answered == 0);
        for (auto& client : clients) {
            auto response = client->read_response(20s);
            REQUIRE(response);
            CHECK(response->status == (password == "wrong" ? 401 : 200));
        }
        // One hash per worker at most, and none for a repeat: remembered.
        auto again = get(Protocol::http2, portico.port(), "/private/slow", basic("slow", password));
        REQUIRE(again);
        CHECK(again->status == (password == "wrong" ? 401 : 200));
        REQUIRE(portico.wait_for_log(hash_line, static_cast<int>(counted) + 1));
        std::string log = portico.log();
        size_t hashes = 0;
        for (size_t at = 0; (at = log.find(hash_line, at)) != std::string::npos; ++at) ++hashes;
        CHECK(hashes - counted <= 2);
        counted = hashes;
    }
    // A client that leaves while its hash runs: the hash ends unheard, and
    // the next client with the same credentials gets its answer.
    for (Protocol protocol : {Protocol::http1, Protocol::http2}) {
        std::string password = protocol == Protocol::http1 ? "gone-1" : "gone-2";
        if (protocol == Protocol::http1) {
            Client leaving(portico.port());
            leaving.send(
                get_request("/private/slow", "Authorization: " + basic("slow", password) + "\r\n"));
            std::this_thread::sleep_for(50ms);  // read by portico before the close
        } else {
            h2::Client leaving(portico.port());
            leaving.get("/private/slow", {{"authorization", basic("slow", password)}}, "GET",
                        "front.example");
            leaving.pump_for(50ms);
            leaving.abort();
        }
        REQUIRE(portico.wait_for_log(hash_line, static_cast<int>(++counted)));
        auto next = get(protocol, portico.port(), "/private/slow", basic("slow", password));
        REQUIRE(next);
        CHECK(next->status == 401);
    }
    CHECK(portico.worker_pids().size() == 2);
}

TEST_CASE("auth: beyond the hashes a worker computes at once, 503 with Retry-After", "[auth]") {
    UpstreamServer upstream;
    TempDir files;
    std::string users = files.write("users", output_of("htpasswd -nbB -C 11 slow pw-slow") + "\n");
    Portico portico(auth_config(upstream.address(), users));
    // Twelve different wrong passwords at once: 2 workers x 2 hashes run,
    // the others are refused at once rather than queued.
    std::vector<std::unique_ptr<Client>> clients;
    for (int i = 0; i < 12; ++i) clients.push_back(std::make_unique<Client>(portico.port()));
    for (size_t i = 0; i < clients.size(); ++i)
        clients[i]->send(
            get_request("/private/slow",
                        "Authorization: " + basic("slow", "guess" + std::to_string(i)) + "\r\n"));
    int refused = 0;
    int busy = 0;
    for (auto& client : clients) {
        auto response = client->read_response(20s);
        REQUIRE(response);
        if (response->status == 401) ++refused;
        if (response->status == 503) {
            ++busy;
            CHECK(response->header("retry-after") == "1");
        }
    }
    CHECK(refused + busy == 12);
    CHECK(refused <= 4);
    CHECK(busy >= 8);
    CHECK(portico.wait_for_log("are answered 503"));
    CHECK(upstream.request_count() == 0);
}

TEST_CASE("auth: a reload reads the htpasswd file again", "[auth]") {
    UpstreamServer upstream;
    TempDir files;
    std::string users = files.write("users", output_of("htpasswd -nbm carol first") + "\n");
    Portico portico(auth_config(upstream.address(), users));
    auto first = get(Protocol::http1, portico.port(), "/private/", basic("carol", "first"));
    REQUIRE(first);
    CHECK(first->status == 200);

    files.write("users", output_of("htpasswd -nbm carol second") + "\n");
    portico.signal(SIGHUP);
    REQUIRE(portico.wait_for_log("reloaded:"));
    // The old workers may take a last connection while they stop accepting.
    auto deadline = std::chrono::steady_clock::now() + 5s;
    int status = 0;
    while (status != 200 && std::chrono::steady_clock::now() < deadline) {
        auto second = get(Protocol::http1, portico.port(), "/private/", basic("carol", "second"));
        REQUIRE(second);
        status = second->status;
        if (status != 200) std::this_thread::sleep_for(20ms);
    }
    CHECK(status == 200);
    for (Protocol protocol : {Protocol::http1, Protocol::http2}) {
        auto second = get(protocol, portico.port(), "/private/", basic("carol", "second"));
        REQUIRE(second);
        CHECK(second->status == 200);
        auto old = get(protocol, portico.port(), "/private/", basic("carol", "first"));
        REQUIRE(old);
        CHECK(old->status == 401);
    }
}

}  // namespace basic_auth_test
