// A location's auth key: each broken value is a `portico -t` error at its
// line and column (an htpasswd line's own number in the message), and a good
// one loads its users and keeps the client's Authorization from the upstream
// unless forward = true.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "config/config.hpp"

namespace config_auth_test {

namespace {

namespace fs = std::filesystem;
using portico::config::LoadResult;
using portico::config::parse_config;

struct ConfigFolder {
    std::string path;
    ConfigFolder() {
        char pattern[] = "/tmp/portico-auth-XXXXXX";
        REQUIRE(::mkdtemp(pattern) != nullptr);
        path = pattern;
    }
    ~ConfigFolder() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
    std::string file() const { return path + "/portico.toml"; }
    void write(const std::string& name, const std::string& content) const {
        std::ofstream(path + "/" + name) << content;
    }
};

constexpr const char* alice = "alice:$apr1$8kAQYbnp$6bNeZHoabGridlLNBAVwL/\n";

// Lines 1-6; the auth key is on line 7.
std::string with_auth(const std::string& auth) {
    return "[server]\nlisten = [\"127.0.0.1:0\"]\n\n[[location]]\nprefix = \"/\"\nproxy = "
           "\"http://127.0.0.1:3000\"\n" +
           auth + "\n";
}

std::string all_messages(const LoadResult& result) {
    std::string out;
    for (const auto& error : result.errors) out += "\n  " + error.to_string();
    return out;
}

struct BrokenAuth {
    const char* what;
    const char* auth;     // line 7
    const char* at;       // "LINE:COL"
    std::string message;  // a part of the message; FOLDER stands for the config folder
};

}  // namespace

TEST_CASE("auth: each broken value is reported at its place", "[config][auth]") {
    ConfigFolder folder;
    folder.write("users", alice);
    folder.write("malformed", std::string(alice) +
                                  "no colon\nbob:$2y$05$2rHckgDLE154vaOXhqHblOMQjLYKWp2HhcdZ"
                                  "hKKFlwn4dkG.hdZR6\ncarol:plaintext\n");
    folder.write("empty", "# nobody yet\n");
    const BrokenAuth broken[] = {
        {"a missing htpasswd file", "auth = { realm = \"r\", htpasswd = \"nope\" }", "7:34",
         "location '/': auth.htpasswd: cannot read FOLDER/nope: No such file or directory"},
        {"an htpasswd that is a folder", "auth = { realm = \"r\", htpasswd = \".\" }", "7:34",
         "auth.htpasswd: cannot read FOLDER"},
        {"a malformed line", "auth = { realm = \"r\", htpasswd = \"malformed\" }", "7:34",
         "auth.htpasswd: FOLDER/malformed:2: expected \"user:hash\""},
        {"an unsupported hash", "auth = { realm = \"r\", htpasswd = \"malformed\" }", "7:34",
         "auth.htpasswd: FOLDER/malformed:4: user 'carol': not a hash portico checks"},
        {"a file without users", "auth = { realm = \"r\", htpasswd = \"empty\" }", "7:34",
         "auth.htpasswd: FOLDER/empty has no user"},
        {"no realm", "auth = { htpasswd = \"users\" }", "7:8", "auth.realm is required"},
        {"no htpasswd", "auth = { realm = \"r\" }", "7:8", "auth.htpasswd is required"},
        {"a realm with a line break", "auth = { realm = \"a\\nb\", htpasswd = \"users\" }", "7:18",
         "auth.realm: expected a header value without line breaks"},
        {"forward not a boolean",
         "auth = { realm = \"r\", htpasswd = \"users\", forward = \"yes\" }", "7:53",
         "auth.forward: expected true or false"},
        {"an unknown key", "auth = { realm = \"r\", htpasswd = \"users\", user = \"x\" }", "7:43",
         "unknown key 'user'"},
        {"auth not a table", "auth = \"users\"", "7:8", "auth: expected a table"},
    };
    for (const BrokenAuth& entry : broken) {
        LoadResult result = parse_config(with_auth(entry.auth), folder.file());
        std::string message = entry.message;
        if (size_t at = message.find("FOLDER"); at != std::string::npos)
            message.replace(at, 6, folder.path);
        INFO("case: " << entry.what << "\nerrors:" << all_messages(result));
        CHECK_FALSE(result.config);
        std::string expected_start = folder.file() + ":" + entry.at + ": ";
        bool found = false;
        for (const auto& error : result.errors) {
            std::string text = error.to_string();
            found = found ||
                    (text.starts_with(expected_start) && text.find(message) != std::string::npos);
        }
        CHECK(found);
    }
}

TEST_CASE("auth: a malformed line is reported, and the file's other lines are read",
          "[config][auth]") {
    ConfigFolder folder;
    folder.write("malformed", std::string("x\n") + alice + "y\n");
    LoadResult result = parse_config(
        with_auth("auth = { realm = \"r\", htpasswd = \"malformed\" }"), folder.file());
    INFO(all_messages(result));
    REQUIRE(result.errors.size() == 2);
    CHECK(result.errors[0].to_string().find("malformed:1: ") != std::string::npos);
    CHECK(result.errors[1].to_string().find("malformed:3: ") != std::string::npos);
}

TEST_CASE("auth: the users load, and Authorization stays with portico unless forwarded",
          "[config][auth]") {
    ConfigFolder folder;
    folder.write("users", std::string(alice) +
                              "bob:$5$saltsalt$0rl.MZtoLLPP3X0Rdl8riRnphIcAXJY27/"
                              "aOAyK2hB5\n");
    auto load = [&](const std::string& auth) {
        LoadResult result = parse_config(with_auth(auth), folder.file());
        INFO(all_messages(result));
        REQUIRE(result.config);
        return result;
    };
    LoadResult kept = load("auth = { realm = \"admin\", htpasswd = \"users\" }");
    const portico::config::LocationConfig& location = kept.config->locations[0];
    REQUIRE(location.auth);
    CHECK(location.auth->realm == "admin");
    CHECK(location.auth->htpasswd == folder.path + "/users");
    CHECK_FALSE(location.auth->forward);
    REQUIRE(location.auth->users.size() == 2);
    CHECK(location.auth->users[1].user == "bob");
    // An empty proxy_headers value removes the client's header upstream.
    REQUIRE(location.proxy_headers.size() == 1);
    CHECK(location.proxy_headers[0].name == "Authorization");
    CHECK(location.proxy_headers[0].value.source.empty());

    LoadResult forwarded =
        load("auth = { realm = \"admin\", htpasswd = \"users\", forward = true }");
    CHECK(forwarded.config->locations[0].auth->forward);
    CHECK(forwarded.config->locations[0].proxy_headers.empty());

    // The location's own Authorization rule wins over the removal.
    LoadResult own = load(
        "auth = { realm = \"admin\", htpasswd = \"users\" }\nproxy_headers = { authorization = "
        "\"Bearer app-token\" }");
    const auto& rules = own.config->locations[0].proxy_headers;
    REQUIRE(rules.size() == 1);
    CHECK(rules[0].value.source == "Bearer app-token");
}

}  // namespace config_auth_test
