// The config loader: TOML in, a config or errors out (each with a line and
// column), never a crash. Relative paths resolve against /nonexistent, so
// `root` checks fail fast instead of reading this machine's folders.
#include <dlfcn.h>
#include <netdb.h>

#include <string>
#include <string_view>

#include "config/config.hpp"
#include "fuzz_support.hpp"

// The loader resolves host names (servers, proxy URLs). A fuzzed name would
// be a DNS query: seconds, and whatever the network answers. This
// definition, in the fuzzer's executable, comes before libc's: numeric
// addresses only, so every input runs the same, fast, offline.
extern "C" int getaddrinfo(const char* node, const char* service, const struct addrinfo* hints,
                           struct addrinfo** result) {
    using Real = int (*)(const char*, const char*, const struct addrinfo*, struct addrinfo**);
    static const Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "getaddrinfo"));
    struct addrinfo numeric = hints != nullptr ? *hints : addrinfo{};
    numeric.ai_flags |= AI_NUMERICHOST;
    return real(node, service, &numeric, result);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t length) {
    std::string_view text(reinterpret_cast<const char*>(data), length);
    portico::config::LoadResult result =
        portico::config::parse_config(text, "/nonexistent/portico.toml");
    FUZZ_CHECK(result.config.has_value() == result.errors.empty());
    for (const auto& error : result.errors) {
        FUZZ_CHECK(!error.message.empty());
        FUZZ_CHECK(!error.to_string().empty());
    }
    return 0;
}
