// [tls]: the TLS listeners and their certificates; [http2], the protocol
// they offer beside HTTP/1.1. Only the shape is checked
// here; whether the files load and match is the TLS layer's check
// (tls::load_server_tls), which `portico -t` and every reload run too.
#include "config/sections.hpp"

namespace portico::config {

std::optional<CertificateFiles> read_certificate_files(const toml::node& entry,
                                                       std::string_view field,
                                                       LoadContext& context) {
    const toml::table* table = entry.as_table();
    if (!table) {
        context.diagnostics.error(entry.source(), std::string(field) +
                                                      ": expected { cert = \"FILE.pem\", key = "
                                                      "\"FILE.key\" }, got " +
                                                      describe(entry));
        return std::nullopt;
    }
    TableReader reader(*table, std::string(field) + ".", "a " + std::string(field) + " entry",
                       context.diagnostics);
    CertificateFiles files;
    files.where = position_of(entry.source());
    // Both checked, so a file missing both hears of both.
    bool has_cert = reader.require("cert", "cert = \"certs/example.pem\"");
    bool has_key = reader.require("key", "key = \"certs/example.key\"");
    bool complete = has_cert && has_key;
    std::string cert, key;
    std::optional<CertificateFiles> read;
    if (complete && reader.read_string("cert", cert) && reader.read_string("key", key)) {
        files.cert = resolve_path(context, cert);
        files.key = resolve_path(context, key);
        read = std::move(files);
    }
    reader.finish();
    return read;
}

namespace {

void read_protocols(TableReader& reader, TlsConfig& tls) {
    std::vector<std::string> names;
    if (!reader.read_string_array("protocols", names)) return;
    bool tls12 = false, tls13 = false, valid = !names.empty();
    for (const std::string& name : names) {
        if (name == "TLSv1.2") tls12 = true;
        else if (name == "TLSv1.3") tls13 = true;
        else valid = false;  // TLSv1.0 and 1.1 are broken; nothing else exists
    }
    if (!valid) {
        reader.wrong("protocols", "a non-empty list of \"TLSv1.2\" and \"TLSv1.3\" "
                                  "(TLS 1.0 and 1.1 are not offered)");
        return;
    }
    tls.tls12 = tls12;
    tls.tls13 = tls13;
}

}  // namespace

void read_tls(const toml::node& node, LoadContext& context, const ServerConfig& server,
              std::optional<TlsConfig>& tls) {
    const toml::table* table = expect_table(node, "tls", context);
    if (!table) {
        return;
    }
    TableReader reader(*table, "tls.", "[tls]", context.diagnostics);
    TlsConfig read;
    if (reader.require("listen", "listen = [\"0.0.0.0:443\"]") &&
        read_listen(reader, "listen", context, read.listen)) {
        // With SO_REUSEPORT both binds would succeed and the kernel would
        // mix TLS and cleartext clients on one port.
        for (const SocketAddress& address : read.listen) {
            for (const SocketAddress& cleartext : server.listen) {
                if (same_socket(address, cleartext) && !is_port_zero(address)) {
                    reader.wrong("listen", "addresses not also in server.listen (" +
                                               address.text + " is in both)");
                }
            }
        }
    }
    if (reader.require("certificates",
                       "certificates = [{ cert = \"certs/example.pem\", key = \"certs/example.key\" }]")) {
        const toml::node* value = reader.get("certificates");
        const toml::array* array = value->as_array();
        if (!array || array->empty()) {
            reader.wrong("certificates", "a non-empty array of { cert = \"...\", key = \"...\" }");
        } else {
            for (const toml::node& entry : *array)
                if (auto files = read_certificate_files(entry, "tls.certificates", context))
                    read.certificates.push_back(std::move(*files));
        }
    }
    read_protocols(reader, read);
    if (const toml::node* ciphers = reader.get("ciphers")) {
        read.ciphers_where = position_of(ciphers->source());
        if (reader.read_string("ciphers", read.ciphers) && read.ciphers.empty())
            reader.wrong("ciphers", "an OpenSSL cipher list like \"ECDHE+AESGCM\"");
    }
    reader.read_bool("session_tickets", read.session_tickets);
    reader.read_duration("handshake_timeout", read.handshake_timeout, Duration{1});
    reader.read_bool("redirect_http", read.redirect_http);
    read_ocsp_stapling(reader, read);
    reader.finish();
    tls = std::move(read);
}

void read_http2(const toml::node& node, LoadContext& context, Http2Config& http2) {
    const toml::table* table = expect_table(node, "http2", context);
    if (!table) return;
    TableReader reader(*table, "http2.", "[http2]", context.diagnostics);
    reader.read_bool("enabled", http2.enabled);
    reader.read_bool("cleartext", http2.cleartext);
    // RFC 9113 6.5.2 advises at least 100; more than a few thousand only
    // lets one client hold more of the worker.
    reader.read_bounded("max_concurrent_streams", http2.max_concurrent_streams, uint32_t{1},
                        uint32_t{10000});
    reader.finish();
}

}  // namespace portico::config
