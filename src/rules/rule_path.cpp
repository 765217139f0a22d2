#include "rules/rule_path.hpp"

#include "http/path_encoding.hpp"

namespace portico::rules {

router::NormalizedPath normalize_rule_path(std::string_view path, std::string& scratch,
                                           std::string& out) {
    scratch.clear();
    http::append_encoded_path(scratch, path);
    return router::normalize_path(scratch, out);
}

}  // namespace portico::rules
