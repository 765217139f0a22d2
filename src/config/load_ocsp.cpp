// [tls]'s OCSP stapling: whether the served certificates get their issuer's
// OCSP response stapled, and a responder that replaces the one the
// certificates name (nginx's ssl_stapling_responder). Whether a responder
// answers is the fetcher's business (acme/staples.hpp), at run time.
#include "config/sections.hpp"

namespace portico::config {

void read_ocsp_stapling(TableReader& reader, TlsConfig& tls) {
    reader.read_bool("ocsp_stapling", tls.ocsp_stapling);
    std::string responder;
    if (!reader.read_string("ocsp_responder", responder)) return;
    bool url = (responder.starts_with("http://") && responder.size() > 7) ||
               (responder.starts_with("https://") && responder.size() > 8);
    if (!url || responder.find_first_of(" \t\r\n\"") != std::string::npos) {
        reader.wrong("ocsp_responder", "the responder's http:// or https:// URL");
        return;
    }
    tls.ocsp_responder = std::move(responder);
}

}  // namespace portico::config
