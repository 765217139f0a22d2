#include "rules/error_pages.hpp"

#include <llhttp.h>

#include "http/request_routing.hpp"
#include "http/status.hpp"
#include "http/template_expand.hpp"
#include "http/header_text.hpp"
#include "rules/rule_path.hpp"

namespace portico::rules {

namespace {

// The page's response succeeded: it goes out with the original status. A
// 206 would carry a Content-Range for the page, not for the error.
bool is_page(int status) {
    return status >= 200 && status < 300 && status != 206;
}

}  // namespace

// The page's response, with the original status; the original error when
// the page fails.
class ErrorPages::StatusKeepingFilter final : public http::ResponseFilter {
public:
    int next_status = 0;  // for the stream start() takes next

protected:
    std::unique_ptr<http::FilterStream> new_stream() override {
        return std::make_unique<Stream>(*this);
    }

private:
    class Stream final : public http::FilterStream {
    public:
        explicit Stream(StatusKeepingFilter& filter) : filter_(filter) {}
        bool start(const http::Request&) override {
            status_ = filter_.next_status;
            return true;
        }
        void head(http::HeadersOut& head) override {
            if (is_page(head.status)) {
                head.status = status_;
                next().head(head);
                return;
            }
            next().take_over().respond_text(status_, http::status_text(status_));
        }
        void body(http::BodyPart& part) override { next().body(part); }
        void end() override { next().end(); }
        void abort() override {}

    private:
        StatusKeepingFilter& filter_;
        int status_ = 0;
    };
};

ErrorPages::ErrorPages(http::ServerContext& server)
    : server_(server), status_filter_(std::make_unique<StatusKeepingFilter>()) {}

ErrorPages::~ErrorPages() = default;

void ErrorPages::serve(const config::Template& uri, int status, http::Exchange& client) {
    // The codec's request, changed into the page's: the exchange lends it
    // const because handlers only read it; the routing rewrites it, as a
    // rewrite step does.
    auto& request = const_cast<http::Request&>(client.request());
    // Through the locations of the site that made the error.
    const router::Router& site_router = server_.sites.router(client.location().site);
    uri_.clear();
    http::expand(uri, request, client.client_address(), {}, uri_);
    size_t question = uri_.find('?');
    std::string_view path = std::string_view(uri_).substr(0, question);
    request.rewritten_query.assign(question == std::string::npos
                                       ? std::string_view()
                                       : std::string_view(uri_).substr(question + 1));
    request.query = request.rewritten_query;
    request.uri_changed = true;
    // As a GET (a HEAD stays one): a POST's 502 gets the page, and its
    // body, read already, is not sent again.
    if (!request.is_head()) {
        request.method = HTTP_GET;
        request.method_name = "GET";
    }
    request.chunked = request.has_content_length = request.expect_continue = false;
    request.content_length = 0;
    // The client's conditions and ranges were about the URI it asked for:
    // the page goes out whole (nginx never answers an error page 304).
    std::erase_if(request.headers, [](const http::HeaderField& field) {
        return http::equals_ignore_case(field.name, "if-none-match") ||
               http::equals_ignore_case(field.name, "if-modified-since") ||
               http::equals_ignore_case(field.name, "range") ||
               http::equals_ignore_case(field.name, "if-range");
    });

    status_filter_->next_status = status;
    http::Exchange& page = status_filter_->wrap(client);
    serving_ = true;
    router::NormalizedPath normalized =
        normalize_rule_path(path, scratch_, request.normalized_path);
    request.path_had_encoded_slash = normalized.had_encoded_slash;
    int location = -1;
    if (normalized.error != router::PathError::none) {
        page.respond_text(404, http::status_text(404));  // the original error, then
    } else {
        switch (http::choose_location(server_, site_router, request, page, location)) {
        case http::LocationChoice::found:
            http::serve_location(server_, page, location);
            break;
        case http::LocationChoice::answered:
            break;
        case http::LocationChoice::no_match:
        case http::LocationChoice::add_slash:
            page.respond_text(404, http::status_text(404));
            break;
        case http::LocationChoice::too_many_reroutes:
            http::answer_reroute_loop(server_, request, page);
            break;
        }
    }
    serving_ = false;
}

namespace {

class ErrorPageStream final : public http::FilterStream {
public:
    ErrorPageStream(const std::vector<std::pair<int, config::Template>>& pages, ErrorPages& shared)
        : pages_(pages), shared_(shared) {}

    // An error page's own request gets none (a pipelined request that
    // starts while a page ends still does: its URI is its own).
    bool start(const http::Request& request) override {
        return !(shared_.serving() && request.uri_changed);
    }
    void head(http::HeadersOut& head) override {
        for (const auto& [status, uri] : pages_) {
            if (status != head.status) continue;
            shared_.serve(uri, status, next().take_over());
            return;
        }
        next().head(head);
    }
    void body(http::BodyPart& part) override { next().body(part); }
    void end() override { next().end(); }
    void abort() override {}

private:
    const std::vector<std::pair<int, config::Template>>& pages_;
    ErrorPages& shared_;
};

}  // namespace

http::StepResult StepsThroughErrorPages::answer(http::Request& request, http::Exchange& client) {
    http::Exchange& filtered = filter_.wrap(client);
    http::StepResult result = http::StepResult::next;
    for (http::RequestStep* step : steps_)
        if ((result = step->answer(request, filtered)) != http::StepResult::next) break;
    if (result != http::StepResult::answered) filter_.unwrap(filtered, client);
    return result;
}

std::unique_ptr<http::FilterStream> ErrorPageFilter::new_stream() {
    return std::make_unique<ErrorPageStream>(pages_, shared_);
}

}  // namespace portico::rules
