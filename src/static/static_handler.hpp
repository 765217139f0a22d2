// root = "DIR": answers GET and HEAD from the files under DIR. It finds the
// file and describes the response; the validators, ranges and encodings are
// separate pieces (conditional, range, encoding). With a proxy on the same
// location it declines what it has no file for, and the upstream answers.
#pragma once

#include "config/config.hpp"
#include "http/exchange.hpp"
#include "static/file_cache.hpp"
#include "static/mime.hpp"

namespace portico::staticfiles {

class StaticHandler final : public http::Handler {
public:
    StaticHandler(const config::LocationConfig& location, FileCache& cache, const MimeTypes& mime);
    bool serve(http::Exchange& exchange) override;

private:
    bool serve_directory(http::Exchange& exchange, std::string_view relative);
    // `name` picks the Content-Type; `gzipped`: `file` is NAME.gz.
    void serve_file(http::Exchange& exchange, std::shared_ptr<const OpenFile> file,
                    std::string_view name, bool gzipped);
    // A file, or its precompressed FILE.gz when gzip_static allows.
    std::shared_ptr<const OpenFile> gzip_variant(http::Exchange& exchange, std::string_view relative);
    bool not_found(http::Exchange& exchange);
    void respond(http::Exchange& exchange, int status);
    void add_common_headers(http::Exchange& exchange, int status);

    const config::LocationConfig& location_;
    FileCache& cache_;
    const MimeTypes& mime_;
    Root root_;
    bool falls_through_;  // a proxy on the same location takes what we have no file for
    std::string scratch_;  // reused for index and .gz paths
};

}  // namespace portico::staticfiles
