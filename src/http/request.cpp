#include "http/request.hpp"

#include <llhttp.h>

namespace portico::http {

bool equals_ignore_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        unsigned char x = static_cast<unsigned char>(a[i]);
        unsigned char y = static_cast<unsigned char>(b[i]);
        if (x == y) continue;
        if ((x | 0x20) != (y | 0x20) || (x | 0x20) < 'a' || (x | 0x20) > 'z') return false;
    }
    return true;
}

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
