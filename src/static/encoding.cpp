#include "static/encoding.hpp"

#include "http/header_text.hpp"

namespace portico::staticfiles {

namespace {

// The q of one "coding;q=0.5" member: 1 when absent, 0 when it says 0.
bool has_nonzero_q(std::string_view parameters) {
    while (!parameters.empty()) {
        size_t semicolon = parameters.find(';');
        std::string_view parameter = http::trim_ows(parameters.substr(0, semicolon));
        if (parameter.size() >= 2 && (parameter[0] == 'q' || parameter[0] == 'Q') &&
            parameter[1] == '=') {
            std::string_view q = http::trim_ows(parameter.substr(2));
            // q = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ): zero when
            // every digit is 0.
            return q.find_first_not_of("0.") != std::string_view::npos;
        }
        if (semicolon == std::string_view::npos) break;
        parameters.remove_prefix(semicolon + 1);
    }
    return true;
}

}  // namespace

bool accepts_gzip(std::string_view accept_encoding) {
    int gzip = -1;  // -1 not listed, 0 refused, 1 accepted
    int wildcard = -1;
    http::for_each_list_member(accept_encoding, [&](std::string_view member) {
        size_t semicolon = member.find(';');
        std::string_view coding = http::trim_ows(member.substr(0, semicolon));
        std::string_view parameters =
            semicolon == std::string_view::npos ? std::string_view() : member.substr(semicolon + 1);
        int verdict = has_nonzero_q(parameters) ? 1 : 0;
        if (http::equals_ignore_case(coding, "gzip") || http::equals_ignore_case(coding, "x-gzip"))
            gzip = verdict;
        else if (coding == "*")
            wildcard = verdict;
    });
    if (gzip >= 0) return gzip == 1;
    return wildcard == 1;
}

}  // namespace portico::staticfiles
