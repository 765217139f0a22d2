#include "cache/policy.hpp"

#include <algorithm>
#include <ctime>

#include "core/http_date.hpp"
#include "http/header_text.hpp"

namespace portico::cache {

namespace {

// RFC 9110 5.6.2.
bool is_tchar(char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), is_tchar);
}

// delta-seconds (RFC 9111 1.2.2): digits only, clamped to longest_delta.
std::optional<Seconds> parse_delta_seconds(std::string_view text) {
    if (text.empty()) return std::nullopt;
    long long value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        value = std::min<long long>(value * 10 + (c - '0'), longest_delta.count());
    }
    return Seconds{value};
}

// Reads one Cache-Control member after another: a token, optionally "="
// and a token or a quoted-string (RFC 9111 5.2, RFC 9110 5.6.4). A
// quoted-string's argument is handed over with its escapes left in: no
// argument portico reads may contain a backslash.
class DirectiveReader {
public:
    explicit DirectiveReader(std::string_view field) : rest_(field) {}

    // False at the end of the field, or at a syntax error (then `broken`).
    bool next(std::string_view& name, std::optional<std::string_view>& argument) {
        // A list may hold empty members ("a, , b", RFC 9110 5.6.1).
        while (!rest_.empty() && (rest_.front() == ',' || is_ows(rest_.front())))
            rest_.remove_prefix(1);
        if (rest_.empty()) return false;
        name = take_token();
        argument.reset();
        if (name.empty()) return fail();
        if (!rest_.empty() && rest_.front() == '=') {
            rest_.remove_prefix(1);
            if (!rest_.empty() && rest_.front() == '"') {
                argument = take_quoted();
                if (!argument) return fail();
            } else {
                argument = take_token();
                if (argument->empty()) return fail();
            }
        }
        while (!rest_.empty() && is_ows(rest_.front())) rest_.remove_prefix(1);
        if (!rest_.empty() && rest_.front() != ',') return fail();
        return true;
    }

    bool broken() const { return broken_; }

private:
    static bool is_ows(char c) { return c == ' ' || c == '\t'; }

    bool fail() {
        broken_ = true;
        return false;
    }

    std::string_view take_token() {
        size_t length = 0;
        while (length < rest_.size() && is_tchar(rest_[length])) ++length;
        std::string_view token = rest_.substr(0, length);
        rest_.remove_prefix(length);
        return token;
    }

    // The text between the quotes, or nullopt when unterminated or holding a
    // control character.
    std::optional<std::string_view> take_quoted() {
        for (size_t at = 1; at < rest_.size(); ++at) {
            unsigned char c = static_cast<unsigned char>(rest_[at]);
            if (c == '"') {
                std::string_view inside = rest_.substr(1, at - 1);
                rest_.remove_prefix(at + 1);
                return inside;
            }
            if (c == '\\') {
                if (++at == rest_.size()) return std::nullopt;
                c = static_cast<unsigned char>(rest_[at]);
                if (c != '\t' && (c < 0x20 || c == 0x7f)) return std::nullopt;
            } else if (c != '\t' && (c < 0x20 || c == 0x7f)) {
                return std::nullopt;
            }
        }
        return std::nullopt;
    }

    std::string_view rest_;
    bool broken_ = false;
};

// A delta-seconds directive: false when its argument is missing, not a
// number, or differs from an earlier occurrence (RFC 9111 4.2.1).
bool read_delta(std::optional<Seconds>& slot, std::optional<std::string_view> argument) {
    if (!argument) return false;
    std::optional<Seconds> seconds = parse_delta_seconds(*argument);
    if (!seconds || (slot && *slot != *seconds)) return false;
    slot = seconds;
    return true;
}

// Expires - Date (RFC 9111 4.2.1); an Expires that does not parse is in the
// past (5.3), and without a usable Date the arrival time stands in for it.
Seconds lifetime_from_expires(const ResponseFacts& response, time_t arrived) {
    std::optional<time_t> expires = core::parse_http_date(response.expires);
    if (!expires) return Seconds{0};
    time_t date = core::parse_http_date(response.date).value_or(arrived);
    if (*expires <= date) return Seconds{0};
    return std::min(Seconds{*expires - date}, longest_delta);
}

std::optional<Seconds> explicit_lifetime(const CacheControl& control, const ResponseFacts& response,
                                         time_t arrived) {
    if (control.s_maxage) return control.s_maxage;  // a shared cache's own (5.2.2.10)
    if (control.max_age) return control.max_age;
    if (!response.expires.empty()) return lifetime_from_expires(response, arrived);
    return std::nullopt;
}

std::optional<Seconds> lifetime_from_valid(const ValidTable& valid, int status) {
    auto exact = std::find_if(valid.begin(), valid.end(),
                              [&](const auto& entry) { return entry.first == status; });
    if (exact != valid.end()) return exact->second;
    auto any = std::find_if(valid.begin(), valid.end(),
                            [](const auto& entry) { return entry.first == 0; });
    if (any != valid.end()) return any->second;
    return std::nullopt;
}

// The corrected initial age (RFC 9111 4.2.3) without response_delay: the
// store does not know when the request left. An Age that is not a
// non-negative integer is ignored (5.1); of a list, the first member counts.
Seconds initial_age(const ResponseFacts& response, time_t arrived) {
    std::string_view age_field = response.age.substr(0, response.age.find(','));
    Seconds age_value = parse_delta_seconds(http::trim_ows(age_field)).value_or(Seconds{0});
    Seconds apparent_age{0};
    if (std::optional<time_t> date = core::parse_http_date(response.date);
        date && *date < arrived) {
        apparent_age = std::min(Seconds{arrived - *date}, longest_delta);
    }
    return std::max(apparent_age, age_value);
}

// Vary's names, lower case, in order, without duplicates; refused names
// the reason instead.
std::string_view read_vary(std::string_view field, std::vector<std::string>& names) {
    if (field.size() > max_vary_length) return "vary-too-large";
    std::string_view refused;
    http::for_each_list_member(field, [&](std::string_view name) {
        if (!refused.empty()) return;
        if (name == "*") {
            refused = "vary-star";
            return;
        }
        if (!is_token(name)) {
            refused = "bad-vary";
            return;
        }
        std::string lower(name.size(), '\0');
        http::copy_lower_case(lower.data(), name);
        if (std::find(names.begin(), names.end(), lower) == names.end())
            names.push_back(std::move(lower));
    });
    if (refused.empty() && names.size() > max_vary_names) refused = "vary-too-large";
    return refused;
}

StoragePolicy refuse(std::string_view why) {
    StoragePolicy policy;
    policy.refused = why;
    return policy;
}

}  // namespace

std::optional<CacheControl> parse_cache_control(std::string_view field) {
    CacheControl control;
    DirectiveReader reader(field);
    std::string_view name;
    std::optional<std::string_view> argument;
    auto is = [&](std::string_view directive) { return http::equals_ignore_case(name, directive); };
    while (reader.next(name, argument)) {
        // Flags keep their meaning whatever argument comes with them: the
        // qualified no-cache and private then cover the whole response.
        if (is("no-store")) {
            control.no_store = true;
        } else if (is("no-cache")) {
            control.no_cache = true;
        } else if (is("private")) {
            control.is_private = true;
        } else if (is("public")) {
            control.is_public = true;
        } else if (is("must-revalidate")) {
            control.must_revalidate = true;
        } else if (is("proxy-revalidate")) {
            control.proxy_revalidate = true;
        } else if (is("max-age")) {
            if (!read_delta(control.max_age, argument)) return std::nullopt;
        } else if (is("s-maxage")) {
            if (!read_delta(control.s_maxage, argument)) return std::nullopt;
        } else if (is("stale-while-revalidate")) {
            if (!read_delta(control.stale_while_revalidate, argument)) return std::nullopt;
        } else if (is("stale-if-error")) {
            if (!read_delta(control.stale_if_error, argument)) return std::nullopt;
        }
    }
    if (reader.broken()) return std::nullopt;
    return control;
}

bool status_may_be_stored(int status) {
    return status >= 200 && status <= 599 && status != 206 && status != 304;
}

StoragePolicy decide_storage(const RequestFacts& request, const ResponseFacts& response,
                             const ValidTable& valid, std::chrono::system_clock::time_point now) {
    if (request.method != "GET" && request.method != "HEAD") return refuse("method");
    std::optional<CacheControl> asked = parse_cache_control(request.cache_control);
    if (!asked) return refuse("bad-cache-control");
    if (asked->no_store) return refuse("no-store");
    if (!status_may_be_stored(response.status)) return refuse("status");

    std::optional<CacheControl> control = parse_cache_control(response.cache_control);
    if (!control) return refuse("bad-cache-control");
    if (control->no_store) return refuse("no-store");
    if (control->is_private) return refuse("private");  // RFC 9111 5.2.2.7: a shared cache
    // RFC 9111 3.5: what the upstream answers to one user's credentials is
    // shared only when it says so.
    if (request.has_authorization && !control->is_public && !control->s_maxage &&
        !control->must_revalidate) {
        return refuse("authorization");
    }
    // nginx never stores a Set-Cookie response (unless told to ignore the
    // field); `public` is the upstream saying the response is everyone's.
    if (response.has_set_cookie && !control->is_public) return refuse("set-cookie");

    StoragePolicy policy;
    if (std::string_view refused = read_vary(response.vary, policy.vary); !refused.empty())
        return refuse(refused);

    const time_t arrived = std::chrono::system_clock::to_time_t(now);
    std::optional<Seconds> lifetime = explicit_lifetime(*control, response, arrived);
    if (!lifetime) lifetime = lifetime_from_valid(valid, response.status);
    // no-cache stores for revalidation only: no lifetime needed.
    if (!lifetime && !control->no_cache) return refuse("no-lifetime");

    policy.storable = true;
    policy.lifetime = lifetime.value_or(Seconds{0});
    policy.initial_age = initial_age(response, arrived);
    const bool must_revalidate = control->must_revalidate || control->proxy_revalidate;
    policy.revalidate_always =
        control->no_cache || (must_revalidate && policy.lifetime == Seconds{0});
    policy.stale_while_revalidate = control->stale_while_revalidate;
    policy.stale_if_error = control->stale_if_error;
    // RFC 9111 4.2.4: these forbid answering stale, unless the upstream
    // allows it itself with the RFC 5861 extension.
    if (control->no_cache || must_revalidate || control->s_maxage) {
        policy.stale_while_revalidate = policy.stale_while_revalidate.value_or(Seconds{0});
        policy.stale_if_error = policy.stale_if_error.value_or(Seconds{0});
    }
    return policy;
}

Seconds current_age(Seconds initial_age, std::chrono::system_clock::time_point stored,
                    std::chrono::system_clock::time_point now) {
    // A clock set back never makes a response younger than it arrived.
    Seconds resident = std::max(Seconds{0}, std::chrono::duration_cast<Seconds>(now - stored));
    return std::min(initial_age + resident, longest_delta);
}

}  // namespace portico::cache
