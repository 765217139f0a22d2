// try_files = ["$uri", "$uri/", "/index.html"] (nginx's try_files, its
// precontent phase): a step composed only for the locations that have it.
// The first entry that names an existing file (an entry ending in '/': a
// directory) becomes the path the static handler serves; when none does,
// the last entry answers: a URI through the locations again (a reroute),
// "=CODE", or "@UPSTREAM" with the original target.
#pragma once

#include <string>

#include "config/config.hpp"
#include "http/request_step.hpp"
#include "static/file_cache.hpp"
#include "static/location_files.hpp"

namespace portico::staticfiles {

class TryFilesStep final : public http::RequestStep {
public:
    // `files` and `cache` outlive the step; the location has try_files.
    TryFilesStep(const config::LocationConfig& location, const LocationFiles& files,
                 FileCache& cache);
    http::StepResult answer(http::Request& request, http::Exchange& client) override;

private:
    // The expanded entry in uri_ names a regular file (or, for an entry
    // written with a trailing '/', a directory) of the location, one the
    // static handler would serve.
    bool names_existing_file(bool wants_directory);
    http::StepResult fall_back(http::Request& request, http::Exchange& client);

    const config::TryFilesConfig& config_;
    bool dotfiles_;
    const LocationFiles& files_;
    FileCache& cache_;
    std::string uri_;  // the entry being tried, reused
};

}  // namespace portico::staticfiles
