#include "rules/regex_captures.hpp"

namespace portico::rules {

std::string required_prefix(std::string_view pattern) {
    if (!pattern.starts_with('^') || pattern.find('|') != std::string_view::npos) return {};
    constexpr std::string_view meaningful = "\\.+*?()[]{}^$";
    constexpr std::string_view quantifiers = "*+?{";
    std::string_view rest = pattern.substr(1);
    size_t end = rest.find_first_of(meaningful);
    std::string_view literal = rest.substr(0, end);
    // "^/ab?" requires "/a" only: the quantifier takes the last character,
    // all its UTF-8 bytes ("^/é?").
    if (end != std::string_view::npos && quantifiers.find(rest[end]) != std::string_view::npos) {
        while (!literal.empty() && (static_cast<unsigned char>(literal.back()) & 0xC0) == 0x80)
            literal.remove_suffix(1);
        if (!literal.empty()) literal.remove_suffix(1);
    }
    return std::string(literal);
}

RegexCaptures::RegexCaptures(const std::string& pattern) {
    re2::RE2::Options options;
    options.set_log_errors(false);  // the config loader reported it, with its line
    regex_ = std::make_unique<re2::RE2>(pattern, options);
    size_t count = regex_->ok() ? static_cast<size_t>(regex_->NumberOfCapturingGroups()) + 1 : 0;
    pieces_.resize(count);
    groups_.resize(count);
    required_prefix_ = required_prefix(pattern);
}

bool RegexCaptures::match_regex(std::string_view text) {
    if (pieces_.empty()) return false;
    if (!regex_->Match(re2::StringPiece(text.data(), text.size()), 0, text.size(),
                       re2::RE2::UNANCHORED, pieces_.data(), static_cast<int>(pieces_.size())))
        return false;
    for (size_t i = 0; i < pieces_.size(); ++i)
        groups_[i] = pieces_[i].data() ? std::string_view(pieces_[i].data(), pieces_[i].size())
                                       : std::string_view();
    return true;
}

}  // namespace portico::rules
