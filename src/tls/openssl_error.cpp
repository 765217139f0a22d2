#include "tls/openssl_error.hpp"

#include <openssl/err.h>

namespace portico::tls {

std::string take_openssl_errors() {
    std::string text;
    while (unsigned long code = ERR_get_error()) {
        const char* reason = ERR_reason_error_string(code);
        if (!text.empty()) text += ": ";
        text += reason ? reason : "error " + std::to_string(ERR_GET_REASON(code));
    }
    return text.empty() ? "unknown" : text;
}

void clear_openssl_errors() { ERR_clear_error(); }

}  // namespace portico::tls
