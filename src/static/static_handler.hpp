// root = "DIR" or alias = "DIR": answers GET and HEAD from the files under
// DIR (static/location_files.hpp maps a path to its file). It finds the
// file and describes the response; the validators, ranges and the choice of
// a precompressed sidecar are separate pieces (conditional, range,
// compress/accept_encoding), and compression on the fly is a filter after
// it (compress/). With a proxy on the same location it declines what it has
// no file for, and the upstream answers.
#pragma once

#include <optional>

#include "config/config.hpp"
#include "http/exchange.hpp"
#include "http/expires.hpp"
#include "static/file_cache.hpp"
#include "static/location_files.hpp"
#include "static/mime.hpp"

namespace portico::staticfiles {

class StaticHandler final : public http::Handler {
public:
    // `files` outlives the handler.
    StaticHandler(const config::LocationConfig& location, const LocationFiles& files,
                  FileCache& cache, const MimeTypes& mime);
    bool serve(http::Exchange& exchange) override;

private:
    bool serve_directory(http::Exchange& exchange, std::string_view relative);
    // The file, or the precompressed sidecar (FILE.br, FILE.zst, FILE.gz)
    // the client likes best among those the location lists and the disk has.
    void serve_best_variant(http::Exchange& exchange, std::shared_ptr<const OpenFile> file,
                            std::string_view relative);
    // `name` picks the Content-Type; `coding`: `file` is NAME's sidecar in it.
    void serve_file(http::Exchange& exchange, std::shared_ptr<const OpenFile> file,
                    std::string_view name, std::optional<config::Coding> coding);
    bool not_found(http::Exchange& exchange);
    void respond(http::Exchange& exchange, int status);
    void add_common_headers(http::Exchange& exchange, int status);

    const config::LocationConfig& location_;
    FileCache& cache_;
    const MimeTypes& mime_;
    const LocationFiles& files_;
    const Root& root_;
    // A proxy on the same location, or try_files' @upstream, takes what we
    // have no file for.
    bool falls_through_;
    std::optional<http::ExpiresHeaders> expires_;
    std::string scratch_;  // reused for redirect targets and sidecar paths
};

}  // namespace portico::staticfiles
