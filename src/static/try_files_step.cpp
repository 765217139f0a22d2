#include "static/try_files_step.hpp"

#include "http/status.hpp"
#include "http/template_expand.hpp"

namespace portico::staticfiles {

namespace {

// An expansion is only a path when it looks like a normalized one: a
// variable such as $http_x may hold anything, and no entry may climb out
// of the folder ("/../x"), name a dot segment, or smuggle a NUL.
bool is_plain_path(std::string_view uri) {
    if (!uri.starts_with('/') || uri.find('\0') != std::string_view::npos) return false;
    size_t start = 1;
    while (start <= uri.size()) {
        size_t end = uri.find('/', start);
        if (end == std::string_view::npos) end = uri.size();
        std::string_view segment = uri.substr(start, end - start);
        // An empty segment is allowed only as the last one: "/dir/".
        if ((segment.empty() && end != uri.size()) || segment == "." || segment == "..")
            return false;
        start = end + 1;
    }
    return true;
}

}  // namespace

TryFilesStep::TryFilesStep(const config::LocationConfig& location, const LocationFiles& files,
                           FileCache& cache)
    : config_(*location.try_files), dotfiles_(location.dotfiles), files_(files), cache_(cache) {}

http::StepResult TryFilesStep::answer(http::Request& request, http::Exchange& client) {
    for (const config::Template& entry : config_.files) {
        uri_.clear();
        http::expand(entry, request, client.client_address(), {}, uri_);
        // nginx decides "a directory" from the entry as written ("$uri/"),
        // not from what it expands to: "$uri" for "/docs/" names no file.
        bool wants_directory = entry.source.ends_with('/');
        // "$uri/" for "/docs/" is "/docs//": the same folder to the kernel.
        if (wants_directory && uri_.ends_with("//")) uri_.pop_back();
        if (!names_existing_file(wants_directory)) continue;
        // "$uri/" for "/docs": the path stays "/docs", and the static
        // handler answers with its 301 to "/docs/" (as nginx does for a
        // directory), so the page's relative links resolve. Otherwise the
        // static handler serves the entry.
        bool adds_slash_only = uri_.size() == request.normalized_path.size() + 1 &&
                               uri_.ends_with('/') && uri_.starts_with(request.normalized_path);
        if (!adds_slash_only) request.normalized_path = uri_;
        return http::StepResult::next;
    }
    return fall_back(request, client);
}

bool TryFilesStep::names_existing_file(bool wants_directory) {
    if (!is_plain_path(uri_)) return false;
    std::optional<std::string_view> relative = files_.relative(uri_);
    if (!relative || (!dotfiles_ && has_hidden_segment(*relative)) || !files_.root().fd)
        return false;
    int error = 0;
    std::shared_ptr<const OpenFile> file = cache_.open(files_.root(), *relative, error);
    if (!file) return false;
    return wants_directory ? file->is_directory() : file->is_regular();
}

http::StepResult TryFilesStep::fall_back(http::Request& request, http::Exchange& client) {
    using Fallback = config::TryFilesConfig::Fallback;
    switch (config_.fallback) {
    case Fallback::status:
        client.respond_text(config_.status, http::status_text(config_.status));
        return http::StepResult::answered;
    case Fallback::upstream:
        request.skip_static_files = true;
        return http::StepResult::next;
    case Fallback::uri:
        break;
    }
    uri_.clear();
    http::expand(config_.uri, request, client.client_address(), {}, uri_);
    // A URI made of what the client sent ("/$http_x") must still be a path
    // the locations can be chosen on.
    if (!is_plain_path(uri_.substr(0, uri_.find('?')))) {
        client.respond_text(404, http::status_text(404));
        return http::StepResult::answered;
    }
    // "/index.php?page=$uri": the part after '?' becomes the query.
    size_t question = uri_.find('?');
    if (question != std::string::npos) {
        request.rewritten_query.assign(uri_, question + 1);
        request.query = request.rewritten_query;
        uri_.resize(question);
    }
    request.normalized_path = uri_;
    request.uri_changed = true;
    return http::StepResult::reroute;
}

}  // namespace portico::staticfiles
