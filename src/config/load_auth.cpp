// A location's `auth = { realm, htpasswd, forward }` (nginx auth_basic and
// auth_basic_user_file; access/basic_auth.hpp checks it). The htpasswd file
// is read here, so a reload reads it again with the rest of the config.
#include <strings.h>

#include "config/htpasswd.hpp"
#include "config/sections.hpp"

namespace portico::config {

namespace {

void read_users(TableReader& reader, AuthConfig& auth) {
    const toml::node& node = *reader.get("htpasswd");
    FileText file = read_whole_file(auth.htpasswd);
    if (!file.error.empty()) {
        reader.report("htpasswd", node, "cannot read " + auth.htpasswd + ": " + file.error);
        return;
    }
    std::vector<HtpasswdProblem> problems;
    parse_htpasswd(file.text, auth.users, problems);
    for (const HtpasswdProblem& problem : problems)
        reader.report("htpasswd", node,
                      auth.htpasswd + ":" + std::to_string(problem.line) + ": " + problem.message);
    if (problems.empty() && auth.users.empty())
        reader.report("htpasswd", node, auth.htpasswd + " has no user: nobody could log in");
}

// forward = false: the client's Authorization is removed from the upstream
// request by a proxy_headers rule with an empty value, so the proxy pays no
// test of its own per request. A rule the location sets itself wins.
void keep_credentials_here(LocationConfig& location) {
    for (const HeaderRule& rule : location.proxy_headers)
        if (::strcasecmp(rule.name.c_str(), "authorization") == 0) return;
    location.proxy_headers.push_back({"Authorization", {}});
}

}  // namespace

void read_auth(TableReader& reader, const std::string& label, LoadContext& context,
               LocationConfig& location) {
    const toml::node* node = reader.get("auth");
    if (node == nullptr) return;
    const toml::table* table = node->as_table();
    if (table == nullptr) {
        reader.wrong("auth", "a table like { realm = \"admin\", htpasswd = \"htpasswd\" }");
        return;
    }
    TableReader auth_reader(*table, label + ": auth.", label + "'s auth", context.diagnostics);
    AuthConfig auth;
    bool ok = auth_reader.require("realm", "realm = \"admin\"") &&
              read_header_value(auth_reader, "realm", auth.realm);
    std::string htpasswd;
    if (auth_reader.require("htpasswd", "htpasswd = \"htpasswd\"") &&
        auth_reader.read_string("htpasswd", htpasswd)) {
        auth.htpasswd = resolve_path(context, htpasswd);
        read_users(auth_reader, auth);
    } else {
        ok = false;
    }
    auth_reader.read_bool("forward", auth.forward);
    auth_reader.finish();
    if (!ok) return;
    if (!auth.forward) keep_credentials_here(location);
    location.auth = std::move(auth);
}

}  // namespace portico::config
