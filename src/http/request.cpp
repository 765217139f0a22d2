#include "http/request.hpp"

#include <llhttp.h>

namespace portico::http {

bool Request::is_head() const { return method == HTTP_HEAD; }

std::string_view Request::header(std::string_view name) const {
    for (const HeaderField& field : headers)
        if (equals_ignore_case(field.name, name)) return field.value;
    return {};
}

void Request::reset() {
    std::string keep_path = std::move(normalized_path);
    std::vector<HeaderField> keep_headers = std::move(headers);
    *this = Request{};
    keep_path.clear();
    keep_headers.clear();
    normalized_path = std::move(keep_path);
    headers = std::move(keep_headers);
}

}  // namespace portico::http
