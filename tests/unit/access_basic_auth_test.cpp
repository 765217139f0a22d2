// Basic auth's pieces: the apr1 hash against Apache's and OpenSSL's output,
// the Authorization header's parse, the challenge's quoting, and the
// htpasswd file's lines.
#include <catch2/catch.hpp>

#include "access/apr1.hpp"
#include "access/basic_auth.hpp"
#include "access/basic_credentials.hpp"
#include "config/htpasswd.hpp"

namespace access_basic_auth_test {

using portico::access::apr1_hash;
using portico::access::basic_challenge;
using portico::access::BasicCredentials;
using portico::access::parse_basic_credentials;

TEST_CASE("apr1: the hashes htpasswd -m and openssl passwd -apr1 made", "[access][auth]") {
    // htpasswd -nbm alice secret
    CHECK(apr1_hash("secret", "8kAQYbnp") == "$apr1$8kAQYbnp$6bNeZHoabGridlLNBAVwL/");
    // openssl passwd -apr1 -salt abcdefgh 'pässword' (UTF-8 bytes)
    CHECK(apr1_hash("p\xc3\xa4ssword", "abcdefgh") == "$apr1$abcdefgh$rRdIxwY5XRHT4TMtBPZn.0");
    // openssl passwd -apr1 -salt xy '': an empty password, a short salt
    CHECK(apr1_hash("", "xy") == "$apr1$xy$43..WIhbfuznGvwoCyUek/");
    // A password longer than one MD5 block's worth of the mixed digest.
    CHECK(apr1_hash("a password of more than sixteen characters", "saltsalt") ==
          "$apr1$saltsalt$e4EbMvW0wpu6omlUGkVqo/");
    CHECK(apr1_hash("secret", "8kAQYbnp") != apr1_hash("secreT", "8kAQYbnp"));
}

TEST_CASE("basic credentials: user and password from the header", "[access][auth]") {
    std::string decoded;
    BasicCredentials credentials;
    // "alice:se:cret": the password may hold a colon, the user may not.
    REQUIRE(parse_basic_credentials("Basic YWxpY2U6c2U6Y3JldA==", decoded, credentials));
    CHECK(credentials.user == "alice");
    CHECK(credentials.password == "se:cret");
    // The scheme in any case, several spaces, no padding.
    REQUIRE(parse_basic_credentials("bAsIc   YWxpY2U6c2U6Y3JldA", decoded, credentials));
    CHECK(credentials.password == "se:cret");
    // "bob:" (empty password) and ":x" (empty user) parse; the users decide.
    REQUIRE(parse_basic_credentials("Basic Ym9iOg==", decoded, credentials));
    CHECK(credentials.user == "bob");
    CHECK(credentials.password.empty());
    REQUIRE(parse_basic_credentials("Basic Ong=", decoded, credentials));
    CHECK(credentials.user.empty());
    CHECK(credentials.password == "x");
}

TEST_CASE("basic credentials: what is not Basic credentials", "[access][auth]") {
    std::string decoded;
    BasicCredentials credentials;
    const char* refused[] = {
        "",                         // no header
        "Bearer YWxpY2U6c2VjcmV0",  // another scheme
        "Basic",                    // no credentials
        "Basic ",                   // empty credentials
        "BasicYWxpY2U6c2VjcmV0",    // no space after the scheme
        "Basic YWxpY2U6c2VjcmV0!",  // not base64
        "Basic YWxp Y2U6c2VjcmV0",  // a space inside
        "Basic YWxpY2U6c2VjcmV0=",  // padding that does not fit
        "Basic YWxpY2U6c2VjcmV0a",  // a length no encoding has
        "Basic YWxpY2U=",           // "alice": no colon
        "Basic =YWxpY2U6c2VjcmV0",  // padding first
    };
    for (const char* header : refused) {
        INFO(header);
        CHECK_FALSE(parse_basic_credentials(header, decoded, credentials));
    }
    // Longer than max_credentials_size once decoded: refused without decoding.
    std::string huge = "Basic " + std::string(4 * 1024, 'Q');
    CHECK_FALSE(parse_basic_credentials(huge, decoded, credentials));
    CHECK(decoded.size() < 1024);
    // "OjpA" is "::@": 1024 bytes decoded pass, 1025 do not.
    std::string colons;
    for (int i = 0; i < 341; ++i) colons += "OjpA";
    CHECK(parse_basic_credentials("Basic " + colons + "Og==", decoded, credentials));
    CHECK(decoded.size() == 1024);
    CHECK_FALSE(parse_basic_credentials("Basic " + colons + "OjA=", decoded, credentials));
}

TEST_CASE("basic auth: the realm is a quoted string", "[access][auth]") {
    CHECK(basic_challenge("admin") == "Basic realm=\"admin\"");
    CHECK(basic_challenge("a \"b\" \\c") == "Basic realm=\"a \\\"b\\\" \\\\c\"");
    CHECK(basic_challenge("") == "Basic realm=\"\"");
}

TEST_CASE("htpasswd: good lines load, each bad one is reported with its line",
          "[access][auth][config]") {
    using portico::config::hash_kind;
    using portico::config::HashKind;
    std::vector<portico::config::HtpasswdEntry> users;
    std::vector<portico::config::HtpasswdProblem> problems;
    portico::config::parse_htpasswd(
        "# made by htpasswd\n"
        "alice:$apr1$8kAQYbnp$6bNeZHoabGridlLNBAVwL/\n"
        "\n"
        "bob:$2y$05$2rHckgDLE154vaOXhqHblOMQjLYKWp2HhcdZhKKFlwn4dkG.hdZR6:a comment\r\n"
        "no colon here\n"
        "carol:{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=\n"
        "dave:\n"
        ":$apr1$8kAQYbnp$6bNeZHoabGridlLNBAVwL/\n"
        "erin:$5$saltsalt$0rl.MZtoLLPP3X0Rdl8riRnphIcAXJY27/aOAyK2hB5\n"
        "alice:$apr1$xy$43..WIhbfuznGvwoCyUek/",
        users, problems);
    REQUIRE(users.size() == 4);
    CHECK(users[0].user == "alice");
    CHECK(users[1].user == "bob");
    CHECK(users[1].hash == "$2y$05$2rHckgDLE154vaOXhqHblOMQjLYKWp2HhcdZhKKFlwn4dkG.hdZR6");
    CHECK(users[2].user == "erin");
    REQUIRE(problems.size() == 4);
    CHECK(problems[0].line == 5);
    CHECK(problems[0].message == "expected \"user:hash\"");
    CHECK(problems[1].line == 6);
    CHECK(problems[1].message.find("carol': not a hash portico checks") != std::string::npos);
    CHECK(problems[1].message.find("{SHA}") == std::string::npos);  // the hash stays secret
    CHECK(problems[2].line == 7);
    CHECK(problems[3].line == 8);

    CHECK(hash_kind("$2b$12$" + std::string(53, 'a')) == HashKind::bcrypt);
    CHECK(hash_kind("$2y$05$" + std::string(52, 'a')) == HashKind::unsupported);
    CHECK(hash_kind("$6$rounds=5000$salt$" + std::string(86, 'x')) == HashKind::sha512);
    CHECK(hash_kind("$6$salt$" + std::string(85, 'x')) == HashKind::unsupported);
    CHECK(hash_kind("$apr1$123456789$" + std::string(22, 'x')) == HashKind::unsupported);
    CHECK(hash_kind("$1$salt$" + std::string(22, 'x')) == HashKind::unsupported);
    CHECK(hash_kind("plain") == HashKind::unsupported);
}

}  // namespace access_basic_auth_test
