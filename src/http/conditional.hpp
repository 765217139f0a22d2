// Validators and conditional requests (RFC 9110 8.8, 13): the ETag we send,
// and whether a request's If-None-Match / If-Modified-Since / If-Range hold.
#pragma once

#include <sys/types.h>

#include <ctime>
#include <string>
#include <string_view>

namespace portico::http {

// "\"<mtime seconds hex>.<nanoseconds hex>-<size hex>\"": nginx's, plus the
// nanoseconds, so a file rewritten within the same second with the same size
// gets a new tag (nginx's would not change). Strong.
std::string make_etag(const struct timespec& mtime, off_t size);

// If-None-Match: true when a listed tag matches `etag` by weak comparison
// (W/ ignored on both sides), or the value is "*".
bool none_match_fails(std::string_view if_none_match, std::string_view etag);

// Whether to answer 304 Not Modified: If-None-Match decides when present
// (RFC 9110 13.2.2: If-Modified-Since is then ignored); else
// If-Modified-Since when it parses and the file is not newer.
bool not_modified(std::string_view if_none_match, std::string_view if_modified_since,
                  std::string_view etag, time_t mtime);

// If-Range: the Range applies when the value is our ETag (strong comparison,
// so a weak tag never matches) or an HTTP date equal to Last-Modified.
bool if_range_holds(std::string_view if_range, std::string_view etag, time_t mtime);

}  // namespace portico::http
