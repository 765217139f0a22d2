#include "http/path_encoding.hpp"

namespace portico::http {

void append_encoded_path(std::string& out, std::string_view path) {
    static constexpr char hex[] = "0123456789ABCDEF";
    for (char c : path) {
        unsigned char byte = static_cast<unsigned char>(c);
        bool plain = (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
                     (byte >= '0' && byte <= '9') ||
                     std::string_view("/-._~!$&'()*+,;=:@").find(c) != std::string_view::npos;
        if (plain) {
            out.push_back(c);
        } else {
            out.push_back('%');
            out.push_back(hex[byte >> 4]);
            out.push_back(hex[byte & 15]);
        }
    }
}

router::NormalizedPath normalize_rule_path(std::string_view path, std::string& scratch,
                                           std::string& out) {
    scratch.clear();
    append_encoded_path(scratch, path);
    return router::normalize_path(scratch, out);
}

}  // namespace portico::http
