// portico convert: limits and access control, written to the keys of the
// spec's "Limits and access control" ([limit.NAME], limit, max_concurrent,
// allow/deny, auth): the text written, and that portico's loader takes it.
#include <catch2/catch.hpp>

#include "convert_support.hpp"

using namespace portico::test::convert_support;

namespace convert_access_test {

TEST_CASE("convert: limit_req_zone and limit_req", "[convert]") {
    Folder folder;
    Result result = convert_http(folder,
                                 "limit_req_zone $binary_remote_addr zone=api:10m rate=10r/s;\n"
                                 "limit_req_zone $http_x_api_key zone=keys:1m rate=600r/m;\n"
                                 "server {\n root www;\n"
                                 " location /api/ { limit_req zone=api burst=20 nodelay; "
                                 "limit_req zone=keys; root www; }\n"
                                 " location /login { limit_req zone=api burst=20 nodelay; "
                                 "limit_req_status 429; root www; }\n"
                                 "}\n");
    INFO(result.toml);
    // nginx's default status is 503; the location's own 429 would change
    // the shared limit: refused.
    CHECK(result.refusals ==
          std::vector<std::string>{"nginx.conf:8: limit_req zone=api burst=20 nodelay: portico's "
                                   "burst, delay and status belong to the limit: another location "
                                   "uses zone api otherwise"});
    CHECK(
        result.has("[limit.api]\nkey = \"$remote_addr\"\nrate = \"10r/s\"\nburst = 20\n"
                   "delay = 20\nstatus = 503\nzone_size = 10485760"));
    CHECK(
        result.has("[limit.keys]\nkey = \"$http_x_api_key\"\nrate = \"600r/m\"\nburst = 0\n"
                   "delay = 0\nstatus = 503\nzone_size = 1048576"));
    CHECK(result.has("limit = [\"api\", \"keys\"]"));
    CHECK(result.config_errors.empty());
    Result unknown = convert_http(folder, "server { root www; limit_req zone=nope; }");
    CHECK(unknown.refused("limit_req zone=nope"));
}

TEST_CASE("convert: limit_req delay=N, a delay above the burst, a small zone", "[convert]") {
    Folder folder;
    Result result = convert_http(folder,
                                 "limit_req_zone $binary_remote_addr zone=a:1m rate=6r/m;\n"
                                 "limit_req_zone $binary_remote_addr zone=b:1m rate=1r/s;\n"
                                 "limit_req_zone $binary_remote_addr zone=c:16k rate=1r/s;\n"
                                 "limit_req_status 429;\n"
                                 "server { root www;\n"
                                 " location /a/ { limit_req zone=a burst=5 delay=2; root www; }\n"
                                 " location /b/ { limit_req zone=b burst=2 delay=9; root www; }\n"
                                 " location /c/ { limit_req zone=c; root www; }\n"
                                 "}");
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.has("rate = \"6r/m\"\nburst = 5\ndelay = 2\nstatus = 429\n"));
    // nginx passes the whole burst at once when delay is above it.
    CHECK(result.has("rate = \"1r/s\"\nburst = 2\ndelay = 2\nstatus = 429\n"));
    // portico's smallest zone: more keys kept than nginx, never fewer.
    CHECK(result.has("burst = 0\ndelay = 0\nstatus = 429\nzone_size = 65536"));
    CHECK(result.config_errors.empty());
}

TEST_CASE("convert: limit values portico could not load are refused, not written", "[convert]") {
    Folder folder;
    Result result = convert_http(folder,
                                 "limit_req_zone $binary_remote_addr zone=a:1m rate=6r/m;\n"
                                 "limit_req_zone $binary_remote_addr zone=b:1m rate=fast;\n"
                                 "limit_conn_zone $binary_remote_addr zone=c:1m;\n"
                                 "server { root www;\n"
                                 " location /1/ { limit_req zone=a burst=x; root www; }\n"
                                 " location /2/ { limit_req zone=a burst=2 delay=-1; root www; }\n"
                                 " location /3/ { limit_req zone=b; root www; }\n"
                                 " location /4/ { limit_conn c many; root www; }\n"
                                 " location /5/ { limit_conn c 0; root www; }\n"
                                 "}");
    INFO(result.toml);
    CHECK(result.refused("limit_req zone=a burst=x"));
    CHECK(result.refused("limit_req zone=a burst=2 delay=-1"));
    CHECK(result.refused("limit_req_zone $binary_remote_addr zone=b:1m rate=fast"));
    CHECK(result.refused("limit_conn c many"));
    CHECK(result.refused("limit_conn c 0"));
    CHECK(result.refusals.size() == 5);
    CHECK_FALSE(result.has("limit ="));
    CHECK_FALSE(result.has("max_concurrent"));
    CHECK(result.config_errors.empty());
}

TEST_CASE("convert: limit_conn_zone and limit_conn", "[convert]") {
    Folder folder;
    Result result = convert_http(folder,
                                 "limit_conn_zone $binary_remote_addr zone=addr:10m;\n"
                                 "server { root www; location /dl/ { limit_conn addr 2; "
                                 "limit_conn_status 429; root www; } }");
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.has("max_concurrent = { key = \"$remote_addr\", count = 2, status = 429 }"));
    CHECK(result.config_errors.empty());
}

TEST_CASE("convert: allow and deny, nginx's order as portico's most specific entry", "[convert]") {
    Folder folder;
    Result result = convert_http(folder,
                                 "server { root www;\n"
                                 " location /admin/ { allow 10.1.2.3; deny 10.0.0.0/8; "
                                 "allow 192.168.0.0/16; deny all; root www; }\n"
                                 " location /b/ { allow 10.0.0.0/8; deny 10.1.0.0/16; "
                                 "root www; }\n"
                                 " location /c/ { deny all; allow 127.0.0.1; root www; }\n"
                                 "}");
    INFO(result.toml);
    CHECK(
        result.has("allow = [\"10.1.2.3\", \"192.168.0.0/16\"]\ndeny = [\"10.0.0.0/8\", "
                   "\"all\"]"));
    CHECK(result.config_errors.empty());
    // A narrower rule after a broader one never applies in nginx.
    CHECK(result.refused("deny 10.1.0.0/16"));
    CHECK(result.refused("allow 127.0.0.1"));
    Result bad = convert_http(folder, "server { root www; allow 10.0.0.1/8; deny unix:; }");
    CHECK(bad.refused("allow 10.0.0.1/8"));
    CHECK(bad.refused("deny unix:"));
}

TEST_CASE("convert: allow and deny inherit together, as one list", "[convert]") {
    Folder folder;
    Result result = convert_http(folder,
                                 "server { root www; allow 10.0.0.0/8; deny all;\n"
                                 " location /open/ { allow all; root www; } }");
    INFO(result.toml);
    CHECK(
        result.has("prefix = \"/open/\"\nroot = \"" + folder.path() + "/www\"\nallow = [\"all\"]"));
    CHECK_FALSE(result.has("prefix = \"/open/\"\nroot = \"" + folder.path() +
                           "/www\"\nallow = [\"all\"]\ndeny"));
    CHECK(result.config_errors.empty());
}

TEST_CASE("convert: auth_basic", "[convert]") {
    Folder folder;
    folder.write("conf/htpasswd", "admin:$apr1$portico1$hmtXAViM6.lVaeASBCzXo/\n");
    Result result = convert_http(folder,
                                 "server { root www;\n"
                                 " auth_basic \"Admin area\";\n"
                                 " auth_basic_user_file conf/htpasswd;\n"
                                 " location /public/ { auth_basic off; root www; } }");
    INFO(result.toml);
    CHECK(result.refusals.empty());
    CHECK(result.has("auth = { realm = \"Admin area\", htpasswd = \"" + folder.path() +
                     "/conf/htpasswd\" }"));
    CHECK_FALSE(result.has("prefix = \"/public/\"\nroot = \"" + folder.path() + "/www\"\nauth"));
    CHECK(result.config_errors.empty());
    Result missing = convert_http(folder, "server { root www; auth_basic \"x\"; }");
    CHECK(missing.refused("auth_basic x"));
}

}  // namespace convert_access_test
