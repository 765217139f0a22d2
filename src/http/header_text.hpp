// Small pieces of header-value grammar (RFC 9110 5.6) shared by the parser
// and the handlers: case-insensitive tokens, optional whitespace, lists.
#pragma once

#include <string_view>

namespace portico::http {

bool equals_ignore_case_same_size(const char* a, const char* b, size_t size);

// ASCII case-insensitive equality, for header names and tokens. The length
// test is inline: most comparisons of header names stop there.
inline bool equals_ignore_case(std::string_view a, std::string_view b) {
    return a.size() == b.size() && equals_ignore_case_same_size(a.data(), b.data(), a.size());
}

// Copies `from` to `to` in ASCII lower case, other bytes as they are
// (HTTP/2 response field names, each response's).
void copy_lower_case(char* to, std::string_view from);

// llhttp may hand a span over in several calls (one per read). The buffer is
// never moved while a head is parsed, so the pieces are adjacent: this joins
// them. A piece that is not adjacent continues a folded line (obs-fold),
// which RFC 9112 5.2 lets us refuse and llhttp's strict mode lets through:
// false then.
inline bool extend_span(std::string_view& view, const char* at, size_t length) {
    if (view.data() == nullptr) {
        view = {at, length};
        return true;
    }
    if (view.data() + view.size() != at) return false;
    view = {view.data(), view.size() + length};
    return true;
}

// Without leading and trailing spaces and tabs (OWS).
std::string_view trim_ows(std::string_view text);

// Calls visit(member) for each non-empty, trimmed member of a
// comma-separated list ("a, b,,c" -> a, b, c). Quoted commas are not
// special-cased: no list portico reads puts commas inside quotes in practice
// (ETags can't contain them).
template <typename Visit>
void for_each_list_member(std::string_view list, Visit&& visit) {
    while (!list.empty()) {
        size_t comma = list.find(',');
        std::string_view member = trim_ows(list.substr(0, comma));
        if (!member.empty()) visit(member);
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
    }
}

}  // namespace portico::http
