// A decoded path (the normalized one) written back as a URI path: what may
// not stand in a path as it is (RFC 3986 3.3) percent-encoded, and the
// backslash, which browsers treat as a slash. For a redirect's Location and
// a target sent upstream after it was decoded.
#pragma once

#include <string>
#include <string_view>

namespace portico::http {

// Calls `append(piece)` with runs of the path that stand as they are and
// with each escape ("%20"), in order: no buffer of its own.
template <typename Append>
void encode_path(std::string_view path, Append&& append) {
    static constexpr char hex[] = "0123456789ABCDEF";
    size_t run = 0;
    for (size_t i = 0; i < path.size(); ++i) {
        auto byte = static_cast<unsigned char>(path[i]);
        bool plain = (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
                     (byte >= '0' && byte <= '9') ||
                     std::string_view("/-._~!$&'()*+,;=:@").find(path[i]) != std::string_view::npos;
        if (plain) continue;
        if (i > run) append(path.substr(run, i - run));
        const char escape[] = {'%', hex[byte >> 4], hex[byte & 15]};
        append(std::string_view(escape, sizeof escape));
        run = i + 1;
    }
    if (path.size() > run) append(path.substr(run));
}

inline void append_encoded_path(std::string& out, std::string_view path) {
    encode_path(path, [&out](std::string_view piece) { out.append(piece); });
}

}  // namespace portico::http
