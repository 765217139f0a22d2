#include "static/static_handler.hpp"

#include <llhttp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/log.hpp"
#include "http/accept_encoding.hpp"
#include "http/path_encoding.hpp"
#include "http/status.hpp"
#include "http/conditional.hpp"
#include "http/range.hpp"

namespace portico::staticfiles {

using http::ByteRange;
using http::if_range_holds;
using http::not_modified;
using http::parse_byte_range;

StaticHandler::StaticHandler(const config::LocationConfig& location, const LocationFiles& files,
                             FileCache& cache, const MimeTypes& mime)
    : location_(location),
      cache_(cache),
      mime_(mime),
      files_(files),
      root_(files.root()),
      falls_through_(location.upstream.has_value() ||
                     (location.try_files &&
                      location.try_files->fallback == config::TryFilesConfig::Fallback::upstream)) {
    if (location.expires) expires_.emplace(*location.expires, location.cache_control);
}

bool StaticHandler::serve(http::Exchange& exchange) {
    const http::Request& request = exchange.request();
    if (request.method != HTTP_GET && request.method != HTTP_HEAD) {
        if (falls_through_) return false;
        respond(exchange, 405);
        return true;
    }
    if (!root_.fd) {
        respond(exchange, 500);
        return true;
    }
    const std::string& path = request.normalized_path;
    // "%2F" decoded into a '/' would make a different path than the client
    // named (RFC 3986 2.2).
    if (request.path_had_encoded_slash) {
        respond(exchange, 400);
        return true;
    }
    // try_files found no file and ends with @upstream: that one answers.
    if (request.skip_static_files) [[unlikely]]
        return false;
    std::optional<std::string_view> mapped = files_.relative(path);
    if (!mapped) return not_found(exchange);
    std::string_view relative = *mapped;
    if (!location_.dotfiles && has_hidden_segment(relative)) return not_found(exchange);

    int error = 0;
    std::shared_ptr<const OpenFile> file = cache_.open(root_, relative, error);
    if (!file) {
        if (error == EACCES) {
            respond(exchange, 403);
            return true;
        }
        if (error != ENOENT && error != ENOTDIR && error != ENAMETOOLONG && error != ELOOP)
            log::error("cannot open '{}' under root '{}': {}", relative, root_.real_path,
                       std::strerror(error));
        return not_found(exchange);
    }
    if (file->is_directory()) return serve_directory(exchange, relative);
    if (!file->is_regular()) return not_found(exchange);
    serve_best_variant(exchange, std::move(file), relative);
    return true;
}

bool StaticHandler::serve_directory(http::Exchange& exchange, std::string_view relative) {
    const http::Request& request = exchange.request();
    if (!request.normalized_path.ends_with('/')) {
        // 301 to the slash-terminated path. Built from the normalized path
        // (one leading slash, no dot segments) and percent-encoded, so it
        // can't become "//host" or "/\host", which browsers read as another
        // site (an open redirect).
        scratch_.clear();
        http::append_encoded_path(scratch_, request.normalized_path);
        scratch_.push_back('/');
        if (!request.query.empty()) {
            scratch_.push_back('?');
            scratch_.append(request.query);
        }
        std::string_view body = http::status_text(301);
        exchange.begin_response(301, body.size());
        exchange.add_header("Location", scratch_);
        exchange.add_header("Content-Type", "text/plain; charset=utf-8");
        add_common_headers(exchange, 301);
        exchange.send_body(body);
        exchange.end_response();
        return true;
    }
    for (const std::string& index : location_.index) {
        std::string index_path = std::string(relative) + index;
        int error = 0;
        std::shared_ptr<const OpenFile> file = cache_.open(root_, index_path, error);
        if (!file || !file->is_regular()) continue;
        serve_best_variant(exchange, std::move(file), index_path);
        return true;
    }
    if (falls_through_) return false;
    respond(exchange, 403);
    return true;
}

void StaticHandler::serve_best_variant(http::Exchange& exchange,
                                       std::shared_ptr<const OpenFile> file,
                                       std::string_view relative) {
    // The sidecars the client accepts, best first, until one exists.
    config::CodingSet candidates = location_.precompressed;
    std::string_view accept_encoding =
        candidates.empty() ? std::string_view() : exchange.request().header("accept-encoding");
    while (std::optional<config::Coding> coding =
               http::negotiate_coding(accept_encoding, candidates)) {
        scratch_.assign(relative);
        scratch_.append(config::sidecar_suffix(*coding));
        int error = 0;
        std::shared_ptr<const OpenFile> sidecar = cache_.open(root_, scratch_, error);
        if (sidecar && sidecar->is_regular()) {
            serve_file(exchange, std::move(sidecar), relative, coding);
            return;
        }
        candidates.remove(*coding);
    }
    serve_file(exchange, std::move(file), relative, std::nullopt);
}

void StaticHandler::serve_file(http::Exchange& exchange, std::shared_ptr<const OpenFile> file,
                               std::string_view name, std::optional<config::Coding> coding) {
    const http::Request& request = exchange.request();
    const std::string& etag = file->etag;
    time_t mtime = file->info.st_mtim.tv_sec;
    if (not_modified(request.header("if-none-match"), request.header("if-modified-since"), etag,
                     mtime)) {
        exchange.begin_response(304, 0);
        exchange.add_header("ETag", etag);
        exchange.add_header("Last-Modified", file->last_modified_text());
        add_common_headers(exchange, 304);
        exchange.end_response();
        return;
    }
    uint64_t size = static_cast<uint64_t>(file->info.st_size);
    ByteRange range;
    std::string_view range_header = request.header("range");
    if (!range_header.empty() && request.method == HTTP_GET &&
        if_range_holds(request.header("if-range"), etag, mtime))
        range = parse_byte_range(range_header, size);

    char content_range[64];
    if (range.kind == ByteRange::Kind::unsatisfiable) {
        std::string_view body = http::status_text(416);
        int length = std::snprintf(content_range, sizeof content_range, "bytes */%llu",
                                   static_cast<unsigned long long>(size));
        exchange.begin_response(416, body.size());
        exchange.add_header("Content-Range", std::string_view(content_range, static_cast<size_t>(length)));
        exchange.add_header("Content-Type", "text/plain; charset=utf-8");
        add_common_headers(exchange, 416);
        exchange.send_body(body);
        exchange.end_response();
        return;
    }
    bool partial = range.kind == ByteRange::Kind::partial;
    uint64_t offset = partial ? range.first : 0;
    uint64_t length = partial ? range.length() : size;
    exchange.begin_response(partial ? 206 : 200, length);
    exchange.add_header("Content-Type", mime_.for_file(name));
    exchange.add_header("Last-Modified", file->last_modified_text());
    exchange.add_header("ETag", etag);
    if (partial) {
        int written = std::snprintf(content_range, sizeof content_range, "bytes %llu-%llu/%llu",
                                    static_cast<unsigned long long>(range.first),
                                    static_cast<unsigned long long>(range.last),
                                    static_cast<unsigned long long>(size));
        exchange.add_header("Content-Range", std::string_view(content_range, static_cast<size_t>(written)));
    } else {
        exchange.add_header("Accept-Ranges", "bytes");
    }
    if (coding) exchange.add_header("Content-Encoding", config::coding_name(*coding));
    add_common_headers(exchange, partial ? 206 : 200);
    if (file->has_contents) {
        std::string_view bytes = std::string_view(file->contents).substr(offset, length);
        exchange.send_owned_body(bytes, std::move(file));
    } else {
        int fd = file->fd.get();
        exchange.send_file(fd, static_cast<off_t>(offset), length, std::move(file));
    }
    exchange.end_response();
}

bool StaticHandler::not_found(http::Exchange& exchange) {
    if (falls_through_) return false;
    respond(exchange, 404);
    return true;
}

void StaticHandler::add_common_headers(http::Exchange& exchange, int status) {
    if (!location_.precompressed.empty()) exchange.add_header("Vary", "Accept-Encoding");
    if (expires_)
        expires_->add(exchange, status);
    else if (location_.cache_control && status < 400)
        exchange.add_header("Cache-Control", *location_.cache_control);
}

void StaticHandler::respond(http::Exchange& exchange, int status) {
    std::string_view body = http::status_text(status);
    exchange.begin_response(status, body.size());
    exchange.add_header("Content-Type", "text/plain; charset=utf-8");
    if (status == 405) exchange.add_header("Allow", "GET, HEAD");
    add_common_headers(exchange, status);
    exchange.send_body(body);
    exchange.end_response();
}

}  // namespace portico::staticfiles
