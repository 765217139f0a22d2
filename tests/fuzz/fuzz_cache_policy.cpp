// The response cache's policy (src/cache/policy.cpp) on any header values:
// Cache-Control (request and response), Expires, Date, Age and Vary, with
// any method, status, Authorization and Set-Cookie. A decision that breaks
// the policy's own promises is a finding, besides a crash.
#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "cache/policy.hpp"
#include "fuzz_support.hpp"

using namespace portico::cache;

namespace {

constexpr std::string_view refusals[] = {
    "method", "no-store",    "private",           "set-cookie",     "authorization", "vary-star",
    "status", "no-lifetime", "bad-cache-control", "vary-too-large", "bad-vary"};

bool is_lower_token(const std::string& name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t length) {
    if (length < 3) return 0;
    // Byte 0: flags (method, Authorization, Set-Cookie, which `valid`);
    // bytes 1-2: the status; the rest: six fields separated by '\n'.
    const uint8_t flags = data[0];
    const int status = (data[1] << 8 | data[2]) % 1000;
    std::string_view rest(reinterpret_cast<const char*>(data + 3), length - 3);
    std::string_view fields[6];
    for (std::string_view& field : fields) {
        size_t end = rest.find('\n');
        field = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    }
    static const char* const methods[] = {"GET", "HEAD", "POST", "get"};
    RequestFacts request{methods[flags & 3], (flags & 4) != 0, fields[0]};
    ResponseFacts response;
    response.status = status;
    response.cache_control = fields[1];
    response.expires = fields[2];
    response.date = fields[3];
    response.age = fields[4];
    response.vary = fields[5];
    response.has_set_cookie = (flags & 8) != 0;
    const ValidTable valid =
        (flags & 16) ? ValidTable{{200, Seconds{600}}, {0, Seconds{5}}} : ValidTable{};
    const auto now = std::chrono::system_clock::from_time_t(1700000000);

    StoragePolicy policy = decide_storage(request, response, valid, now);
    FUZZ_CHECK(policy.storable == policy.refused.empty());
    if (!policy.storable) {
        FUZZ_CHECK(std::find(std::begin(refusals), std::end(refusals), policy.refused) !=
                   std::end(refusals));
        return 0;
    }
    FUZZ_CHECK(request.method == "GET" || request.method == "HEAD");
    FUZZ_CHECK(status_may_be_stored(status));
    std::optional<CacheControl> control = parse_cache_control(response.cache_control);
    FUZZ_CHECK(control && !control->no_store && !control->is_private);
    FUZZ_CHECK(!response.has_set_cookie || control->is_public);
    FUZZ_CHECK(policy.lifetime >= Seconds{0} && policy.lifetime <= longest_delta);
    FUZZ_CHECK(policy.initial_age >= Seconds{0} && policy.initial_age <= longest_delta);
    FUZZ_CHECK(!control->no_cache || policy.revalidate_always);
    FUZZ_CHECK(policy.vary.size() <= max_vary_names);
    for (size_t i = 0; i < policy.vary.size(); ++i) {
        FUZZ_CHECK(is_lower_token(policy.vary[i]));
        FUZZ_CHECK(std::find(policy.vary.begin(), policy.vary.begin() + i, policy.vary[i]) ==
                   policy.vary.begin() + i);
    }
    Seconds later = current_age(policy.initial_age, now, now + std::chrono::hours(1));
    FUZZ_CHECK(later >= policy.initial_age && later <= longest_delta);
    return 0;
}
