#include "cache/background_refresh.hpp"

#include <llhttp.h>

#include <string>

#include "core/log.hpp"

namespace portico::cache {

namespace {

// Not copied: the refresh has no body (whatever the client's GET carried).
bool describes_a_body(std::string_view name) {
    return http::equals_ignore_case(name, "content-length") ||
           http::equals_ignore_case(name, "transfer-encoding") ||
           http::equals_ignore_case(name, "expect");
}

}  // namespace

void BackgroundRefresh::copy_request(const http::Request& client) {
    request_.reset();
    static_cast<http::RequestFields&>(request_) = client;
    // The client's own: its slot, its log fields.
    request_.held = {};
    request_.request_id = {};
    request_.refused_by = {};
    request_.cache_result = {};
    // A GET for the whole object, without a body (a HEAD's refresh too).
    request_.method = HTTP_GET;
    request_.method_name = "GET";
    request_.upstream_whole_object = true;
    request_.expect_continue = request_.chunked = request_.has_content_length = false;
    request_.content_length = 0;
    request_.upgrade = false;
    request_.normalized_path = client.normalized_path;
    request_.rewritten_query = client.rewritten_query;

    // Every view into text_, sized first so that it never moves.
    size_t bytes = client.target.size() + client.path.size() + client.query.size() +
                   client.authority.size() + client.host.size() + client.tls_server_name.size() +
                   client.server_name.size();
    for (const http::HeaderField& field : client.headers)
        bytes += field.name.size() + field.value.size();
    text_.clear();
    text_.reserve(bytes);
    auto own = [this](std::string_view view) {
        size_t at = text_.size();
        text_.append(view);
        return std::string_view(text_.data() + at, view.size());
    };
    request_.target = own(client.target);
    request_.path = own(client.path);
    request_.authority = own(client.authority);
    request_.host = own(client.host);
    request_.tls_server_name = own(client.tls_server_name);
    request_.server_name = own(client.server_name);
    // After a rewrite the query views the rewritten arguments.
    const std::string& rewritten = client.rewritten_query;
    if (!rewritten.empty() && client.query.data() >= rewritten.data() &&
        client.query.data() < rewritten.data() + rewritten.size())
        request_.query = std::string_view(request_.rewritten_query)
                             .substr(static_cast<size_t>(client.query.data() - rewritten.data()),
                                     client.query.size());
    else
        request_.query = own(client.query);
    for (const http::HeaderField& field : client.headers)
        if (!describes_a_body(field.name))
            request_.headers.push_back({own(field.name), own(field.value)});
}

http::Exchange& BackgroundRefresh::begin(BackgroundRefreshes& owner, LocationCache& cache,
                                         http::Exchange& client, CacheStream& stale_stream) {
    owner_ = &owner;
    running_ = true;
    aborted_ = false;
    status_ = 0;
    copy_request(client.request());
    location_ = &client.location();
    client_ = client.client_address();
    key_ = stale_stream.key;
    http::Exchange& wrapped = cache.filter->wrap(*this);
    // The filters' streams announced themselves for a hit: this is none.
    cache.variant_started = nullptr;
    CacheStream* stream = std::exchange(cache.started, nullptr);
    if (stream != nullptr && stream->request() == &request_) {
        stream->key = stale_stream.key;
        stream->hash = stale_stream.hash;
        stream->mode = CacheStream::Mode::store;
        stream->result = Result::expired;
        stream->background = true;
        stream->stale = stale_stream.stale;
        stream->holds_lock = std::exchange(stale_stream.holds_lock, false);
    }
    return wrapped;
}

void BackgroundRefresh::finish() {
    if (!std::exchange(running_, false)) return;
    // An error status (kept out of the store within stale_if_error), or a
    // response cut short (never stored).
    if ((aborted_ || status_ >= 500) && owner_->may_log_failure())
        log::warn("cache: the background refresh of {} failed ({}); {}", key_,
                  aborted_ ? std::string("cut short") : std::to_string(status_),
                  "the stale copy stays while stale_while_revalidate or stale_if_error allow");
    owner_->release(*this);
}

BackgroundRefresh& BackgroundRefreshes::acquire() {
    if (free_.empty()) {
        all_.push_back(std::make_unique<BackgroundRefresh>());
        free_.push_back(all_.back().get());
    }
    BackgroundRefresh* refresh = free_.back();
    free_.pop_back();
    return *refresh;
}

bool BackgroundRefreshes::may_log_failure() {
    uint64_t now = monotonic_ms();
    if (logged_ms_ != 0 && now - logged_ms_ < 1000) return false;
    logged_ms_ = now;
    return true;
}

}  // namespace portico::cache
