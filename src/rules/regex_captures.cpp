#include "rules/regex_captures.hpp"

namespace portico::rules {

RegexCaptures::RegexCaptures(const std::string& pattern) {
    re2::RE2::Options options;
    options.set_log_errors(false);  // the config loader reported it, with its line
    regex_ = std::make_unique<re2::RE2>(pattern, options);
    size_t count = regex_->ok() ? static_cast<size_t>(regex_->NumberOfCapturingGroups()) + 1 : 0;
    pieces_.resize(count);
    groups_.resize(count);
}

bool RegexCaptures::match(std::string_view text) {
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
