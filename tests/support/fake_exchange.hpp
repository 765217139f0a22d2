// An http::Exchange with no connection behind it, for the unit tests of
// what stands between a handler and the codec (filters) or drives an
// exchange (the proxy): it records what it is asked to send, as the client
// connection would frame it, and lets the test play the client (its output
// blocked or drained, gone, the request body's pieces).
#pragma once

#include <llhttp.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "http/exchange.hpp"
#include "http/request.hpp"

namespace portico::test {

class FakeExchange final : public http::Exchange {
public:
    // The request's views point into `head_bytes`, kept here.
    FakeExchange(std::string method, std::string path,
                 std::vector<std::pair<std::string, std::string>> headers = {})
        : method_(std::move(method)), path_(std::move(path)), header_text_(std::move(headers)) {
        request_.method_name = method_;
        request_.target = path_;
        request_.path = path_;
        request_.method = method_ == "HEAD" ? HTTP_HEAD : method_ == "POST" ? HTTP_POST : HTTP_GET;
        for (const auto& [name, value] : header_text_) request_.headers.push_back({name, value});
    }

    // ---- what the test sets ----
    config::LocationConfig location_config;
    http::PeerAddress peer{};
    bool pending = false;  // output_pending(): the client is not reading

    // ---- what was sent ----
    std::optional<int> status;
    std::optional<uint64_t> content_length;  // nullopt: a streamed response
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    int sends = 0;  // calls that carried body bytes
    bool ended = false;
    bool aborted = false;
    bool switched = false;
    bool flushes_expected = false;  // expect_more_body() was called since the last send
    http::ExchangeListener* listener = nullptr;
    std::shared_ptr<const void> owner;  // of the last owned body or file

    std::string header(std::string_view name) const {
        for (const auto& [n, v] : headers)
            if (http::equals_ignore_case(n, name)) return v;
        return {};
    }
    bool has_header(std::string_view name) const {
        for (const auto& [n, v] : headers)
            if (http::equals_ignore_case(n, name)) return true;
        return false;
    }
    // The client reads what was pending: the listener hears it, as from the loop.
    void drain() {
        pending = false;
        if (listener) listener->on_output_drained();
    }
    // The request has a body of `length` bytes (Content-Length).
    void set_body_length(uint64_t length) {
        request_.has_content_length = true;
        request_.content_length = length;
    }
    // The client's body, as the codec would deliver it; false: held back.
    bool deliver_body(std::string_view data) {
        return listener == nullptr || listener->on_request_body(data);
    }
    void complete_request() {
        if (listener) listener->on_request_complete();
    }
    // The client goes away.
    void go_away() {
        if (http::ExchangeListener* gone = std::exchange(listener, nullptr)) gone->on_client_gone();
    }

    // ---- http::Exchange ----
    const http::Request& request() const override { return request_; }
    const config::LocationConfig& location() const override { return location_config; }
    const http::PeerAddress& client_address() const override { return peer; }
    void set_client_address(const http::PeerAddress& address) override { peer = address; }
    void begin_response(int s, uint64_t length) override {
        status = s;
        content_length = length;
    }
    void begin_streamed_response(int s) override {
        status = s;
        content_length.reset();
    }
    void add_header(std::string_view name, std::string_view value) override {
        headers.emplace_back(name, value);
    }
    void send_body(std::string_view bytes) override { take({&bytes, 1}); }
    void send_body_pieces(std::span<const std::string_view> pieces, bool last) override {
        take(pieces);
        if (last) end_response();
    }
    void expect_more_body() override { flushes_expected = true; }
    void send_owned_body(std::string_view bytes, std::shared_ptr<const void> o) override {
        owner = std::move(o);
        take({&bytes, 1});
    }
    void send_file(int fd, off_t offset, uint64_t length, std::shared_ptr<const void> o) override {
        owner = std::move(o);
        std::string bytes(length, '\0');
        ssize_t got = ::pread(fd, bytes.data(), length, offset);
        bytes.resize(got > 0 ? static_cast<size_t>(got) : 0);
        std::string_view view = bytes;
        take({&view, 1});
    }
    void hand_over_buffer(core::BufferPool& pool, char* block) override { pool.release(block); }
    void end_response() override {
        ended = true;
        listener = nullptr;
    }
    void abort() override {
        aborted = true;
        listener = nullptr;
    }
    void respond_text(int s, std::string_view text) override {
        begin_response(s, text.size());
        add_header("Content-Type", "text/plain; charset=utf-8");
        send_body(text);
        end_response();
    }
    void set_listener(http::ExchangeListener* l) override { listener = l; }
    void resume_request_body() override { ++resumes; }
    void hold_request_body() override { ++holds; }
    bool output_pending() const override { return pending; }
    void switch_protocols() override { switched = true; }
    void set_upstream_timing(uint64_t upstream, uint64_t connect,
                             std::string_view server) override {
        upstream_ns = upstream;
        connect_ns = connect;
        upstream_server = server;
    }

    int resumes = 0;
    int holds = 0;
    uint64_t upstream_ns = 0;
    uint64_t connect_ns = 0;
    std::string upstream_server;

private:
    void take(std::span<const std::string_view> pieces) {
        size_t before = body.size();
        for (std::string_view piece : pieces) body.append(piece);
        if (body.size() > before) ++sends;
        flushes_expected = false;
    }

    std::string method_;
    std::string path_;
    std::vector<std::pair<std::string, std::string>> header_text_;
    http::Request request_;
};

}  // namespace portico::test
