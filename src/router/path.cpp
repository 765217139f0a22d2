#include "router/path.hpp"

namespace portico::router {

namespace {

// -1 for anything that is not a hex digit.
int hex_value(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

// Builds the normalized path one decoded byte at a time. Dot segments are
// resolved when the segment ends (at a '/' or at the end of input), so a
// segment spelled "%2e%2e" is treated exactly like "..": deciding on the raw
// text would let an encoded traversal through.
class PathBuilder {
public:
    explicit PathBuilder(std::string& out) : out_(out) {}

    PathError add(char c) {
        if (c == '\0') {
            return PathError::nul_byte;
        }
        if (c != '/') {
            out_.push_back(c);
            return PathError::none;
        }
        const PathError error = end_segment();
        // Merging here covers "//", "/./" and "/../" alike: after a dot
        // segment is removed the path already ends in '/'.
        if (out_.back() != '/') {
            out_.push_back('/');
        }
        segment_start_ = out_.size();
        return error;
    }

    // A final "." or ".." leaves the slash before it in place: "/a/b/.."
    // names the directory "/a/", as RFC 3986 5.2.4 resolves it.
    PathError finish() { return end_segment(); }

private:
    std::string_view segment() const {
        return std::string_view(out_).substr(segment_start_);
    }

    PathError end_segment() {
        const std::string_view current = segment();
        if (current == ".") {
            out_.resize(segment_start_);
        } else if (current == "..") {
            // nginx answers 400 rather than clamping at "/": a client that
            // tries to climb is probing, not asking for the root.
            if (segment_start_ == 1) {
                return PathError::climbs_above_root;
            }
            const size_t parent_slash = out_.rfind('/', segment_start_ - 2);
            out_.resize(parent_slash + 1);
        }
        segment_start_ = out_.size();
        return PathError::none;
    }

    std::string& out_;
    size_t segment_start_ = 1;  // just after the leading '/'
};

}  // namespace

NormalizedPath normalize_path(std::string_view raw, std::string& out) {
    NormalizedPath result;
    out.clear();
    if (raw.empty() || raw.front() != '/') {
        result.error = PathError::not_origin_form;
        return result;
    }
    // Decoding never lengthens the path, so this is the only allocation, and
    // none at all once `out` has grown to the usual request size.
    out.reserve(raw.size());
    out.push_back('/');
    PathBuilder builder(out);

    for (size_t i = 1; i < raw.size(); ++i) {
        char c = raw[i];
        if (c == '%') {
            const int high = i + 1 < raw.size() ? hex_value(raw[i + 1]) : -1;
            const int low = i + 2 < raw.size() ? hex_value(raw[i + 2]) : -1;
            if (high < 0 || low < 0) {
                result.error = PathError::bad_percent_escape;
                break;
            }
            // Decoded exactly once: "%252e" becomes the text "%2e", never ".".
            c = static_cast<char>(high * 16 + low);
            i += 2;
            if (c == '/') {
                result.had_encoded_slash = true;
            }
        }
        result.error = builder.add(c);
        if (result.error != PathError::none) {
            break;
        }
    }
    if (result.error == PathError::none) {
        result.error = builder.finish();
    }
    if (result.error != PathError::none) {
        // A half-built path must never be mistaken for a normalized one.
        out.clear();
    }
    return result;
}

}  // namespace portico::router
