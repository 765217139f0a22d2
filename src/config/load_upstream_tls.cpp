// tls = { verify, ca, server_name, cert, key } in an [upstream.NAME]: the
// shape only. Whether the files load, and the key matches its certificate,
// is the TLS layer's check (tls::UpstreamTlsSet::load), which `portico -t`
// and every reload run too, as for [tls].
#include "config/sections.hpp"

namespace portico::config {

void read_upstream_tls(TableReader& upstream, LoadContext& context, UpstreamConfig& out) {
    const toml::node* node = upstream.get("tls");
    if (!node) return;
    const toml::table* table = node->as_table();
    if (!table) {
        upstream.wrong("tls", "a table { verify = true, ca = \"ca.pem\", server_name = \"...\" }");
        return;
    }
    std::string field = upstream.field("tls");
    TableReader reader(*table, field + ".", field, context.diagnostics);
    UpstreamTlsConfig tls;
    tls.where = position_of(node->source());
    reader.read_bool("verify", tls.verify);
    if (reader.read_string("ca", tls.ca)) tls.ca = resolve_path(context, tls.ca);
    if (reader.read_string("server_name", tls.server_name) && tls.server_name.empty())
        reader.wrong("server_name", "a host name or an IP address (omit it for the server's own)");
    std::string cert, key;
    bool has_cert = reader.read_string("cert", cert);
    bool has_key = reader.read_string("key", key);
    if (has_cert && has_key) {
        tls.client =
            CertificateFiles{resolve_path(context, cert), resolve_path(context, key), tls.where};
    } else if (has_cert != has_key) {
        // One without the other is a typo, not a choice: say which is missing.
        reader.require(has_cert ? "key" : "cert",
                       has_cert ? "key = \"certs/client.key\"" : "cert = \"certs/client.pem\"");
    }
    reader.finish();
    out.tls = std::move(tls);
}

}  // namespace portico::config
