// [acme] (the CA, the account's contact, where certificates are kept) and a
// site's `acme = true`. Whether the CA answers is the ACME client's
// business (acme/), at run time: here only what `portico -t` can judge.
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "config/sections.hpp"

namespace portico::config {

namespace {

// The storage folder must exist and be writable by the master: the account
// key and every certificate are written there.
void check_storage(TableReader& reader, const std::string& path) {
    std::string why = unusable_directory(path);
    if (why.empty() && ::access(path.c_str(), W_OK) != 0) why = std::strerror(errno);
    if (!why.empty())
        reader.report("storage", *reader.get("storage"),
                      "'" + path + "' is not a writable folder: " + why);
}

}  // namespace

void read_acme(const toml::node& node, LoadContext& context, std::optional<AcmeConfig>& acme) {
    const toml::table* table = expect_table(node, "acme", context);
    if (!table) return;
    TableReader reader(*table, "acme.", "[acme]", context.diagnostics);
    AcmeConfig read;
    if (reader.read_string("email", read.email) &&
        (read.email.find('@') == std::string::npos || !is_header_value(read.email) ||
         read.email.find_first_of(" \"\\") != std::string::npos))
        reader.wrong("email", "an address like \"ops@example.com\"");
    if (reader.require("directory",
                       "directory = \"https://acme-v02.api.letsencrypt.org/directory\"") &&
        reader.read_string("directory", read.directory) &&
        (!read.directory.starts_with("https://") || read.directory.size() <= 8 ||
         read.directory.find_first_of(" \r\n\"") != std::string::npos))
        reader.wrong("directory", "the CA's directory as an https:// URL");
    std::string storage;
    if (reader.require("storage", "storage = \"/var/lib/portico/acme\"") &&
        reader.read_string("storage", storage)) {
        read.storage = resolve_path(context, storage);
        check_storage(reader, read.storage);
    }
    std::string ca_root;
    if (reader.read_string("ca_root", ca_root)) {
        read.ca_root = resolve_path(context, ca_root);
        if (::access(read.ca_root.c_str(), R_OK) != 0)
            reader.report("ca_root", *reader.get("ca_root"),
                          "cannot read '" + read.ca_root + "': " + std::strerror(errno));
    }
    reader.finish();
    acme = std::move(read);
}

void read_site_acme(TableReader& reader, const Config& config, SiteConfig& site) {
    const toml::node* node = reader.get("acme");
    if (!node || !reader.read_bool("acme", site.acme) || !site.acme) return;
    if (!config.acme) {
        reader.report("acme", *node, "needs an [acme] section: the CA to ask");
    } else if (!config.tls) {
        reader.report("acme", *node, "needs a [tls] section: the certificate is for its listeners");
    } else if (site.certificate) {
        reader.report("acme", *node, "cannot be combined with certificate: one or the other");
    } else if (site.names.empty()) {
        reader.report("acme", *node, "needs names: a certificate is for names");
    }
    const toml::node* names = reader.get("names");
    const toml::array* array = names ? names->as_array() : nullptr;
    for (size_t i = 0; array && i < array->size(); ++i) {
        const toml::node& name = *array->get(i);
        const auto* text = name.as_string();
        if (!text) continue;
        if (text->get().find('*') != std::string::npos)
            reader.report("names", name,
                          describe(name) +
                              " is a wildcard: ACME issues one only with DNS-01, which portico "
                              "does not do; list each name, or give the site a certificate");
        else if (text->get().starts_with("~"))
            reader.report("names", name,
                          describe(name) +
                              " is a regex: ACME needs each name spelled out; list them, or give "
                              "the site a certificate");
    }
}

}  // namespace portico::config
