"""Next.js behind nginx (the deployment guides' config): the build's
hashed assets from .next/static with a year of caching, everything else to
the app with the port and no Accept-Encoding (the proxy compresses, not
Node), and the app's catalog cached for an hour by the proxy (expires on
proxied responses)."""
from scenario import (LAST_MODIFIED, NGINX_PROXY_HEADERS, PROXY_ECHO_HEADERS, Request,
                      write_files)

UPSTREAMS = {"app": "tcp"}
# Expires is Date + a year: compared by presence (the two Dates may be a
# second apart); Cache-Control by value.
RESPONSE_HEADERS = ["cache-control", "expires?", "last-modified", "x-powered-by"]
ECHO_HEADERS = PROXY_ECHO_HEADERS + ["x-forwarded-port", "accept-encoding"]

MAIN_JS = "self.__next_f=self.__next_f||[];console.log('main');\n"
APP_CSS = "body{margin:0;font-family:system-ui}\n"
YEAR = "max-age=31536000"


def make_www(www):
    write_files(www, {".next/static/chunks/main-abc123.js": MAIN_JS,
                      ".next/static/css/app.css": APP_CSS,
                      "secret.txt": "outside the alias\n"})


def nginx(c):
    return f"""
    upstream app {{
        server {c.upstreams["app"]};
        keepalive 16;
    }}
    server {{
        listen 127.0.0.1:{c.port};
        server_name _;
        location /_next/static/ {{
            alias {c.www}/.next/static/;
            expires 365d;
        }}
        location / {{
            proxy_pass http://app;{NGINX_PROXY_HEADERS}
            proxy_set_header Connection "";
            proxy_set_header X-Forwarded-Port $server_port;
            proxy_set_header Accept-Encoding "";
        }}
        location /api/catalog/ {{
            proxy_pass http://app;{NGINX_PROXY_HEADERS}
            proxy_set_header Connection "";
            expires 1h;
        }}
    }}"""


def portico(c):
    # Host = "$host": nginx's `Host $host` sends the name without the port,
    # where portico's default (preserve_host) forwards the Host as received.
    return f"""
[upstream.app]
servers = ["{c.upstreams["app"]}"]

[[location]]
prefix = "/_next/static/"
alias = "{c.www}/.next/static/"
expires = "365d"

[[location]]
prefix = "/"
proxy = "app"
proxy_headers = {{ "Host" = "$host", "X-Forwarded-Port" = "$server_port", "Accept-Encoding" = "" }}

[[location]]
prefix = "/api/catalog/"
proxy = "app"
proxy_headers = {{ "Host" = "$host" }}
expires = "1h"
"""


HOST = "shop.example.com"
APP_HEADERS = {"host": HOST, "x-forwarded-proto": "http", "x-forwarded-for": "127.0.0.1",
               "x-real-ip": "127.0.0.1", "x-forwarded-port": "{port}", "accept-encoding": None}
CACHED = {"cache-control": YEAR, "expires?": True, "last-modified": LAST_MODIFIED}
NOT_CACHED = {"cache-control": None, "expires?": False}

REQUESTS = [
    Request("/_next/static/chunks/main-abc123.js", HOST,
            {"status": 200, "body_file": ".next/static/chunks/main-abc123.js", "headers": CACHED}),
    Request("/_next/static/css/app.css", HOST, {"status": 200, "body": "", "headers": CACHED},
            method="HEAD"),
    Request("/_next/static/css/app.css", HOST, {"status": 304, "headers": CACHED},
            headers=[("If-Modified-Since", LAST_MODIFIED)]),
    Request("/_next/static/chunks/missing.js", HOST, {"status": 404, "headers": NOT_CACHED},
            compare_body=False),
    Request("/_next/static/css/app.css?v=2", HOST, {"status": 200, "headers": CACHED}),
    Request("/_next/static/chunks/../css/app.css", HOST, {"status": 200, "headers": CACHED}),
    Request("/_next/static/css/app.css", HOST, {"status": 206, "body": APP_CSS[:4], "headers": CACHED},
            headers=[("Range", "bytes=0-3")]),
    Request("/_next/static/", HOST, {"status": 403, "headers": NOT_CACHED}, compare_body=False),
    Request("/_next/static/css/app.css", HOST, {"status": 405, "headers": NOT_CACHED},
            method="POST", body=b"", compare_body=False),
    # The folder's name without its slash is not under the prefix: the app's.
    Request("/_next/static", HOST, {"status": 200, "echo": {"target": "/_next/static"}}),
    Request("/", f"{HOST}:{{port}}", {"status": 200, "headers": NOT_CACHED,
                                      "echo": {"target": "/", **APP_HEADERS}},
            headers=[("Accept-Encoding", "gzip, deflate, br")]),
    Request("/products/42?ref=home&utm_source=x%20y", HOST,
            {"status": 200, "echo": {"method": "GET",
                                     "target": "/products/42?ref=home&utm_source=x%20y"}}),
    Request("/api/cart", HOST, {"status": 200, "echo": {"method": "POST", "body": "item=42",
                                                        **APP_HEADERS}},
            method="POST", headers=[("Content-Type", "application/x-www-form-urlencoded")],
            body=b"item=42"),
    # Not hidden in this config: the app's X-Powered-By goes out.
    Request("/api/powered", HOST, {"status": 200, "headers": {"x-powered-by": "Express"}}),
    Request("/api/down", HOST, {"status": 503, "body": "app down\n"}),
    # Above the alias: the normalized path /secret.txt is the app's, and the
    # target goes to it as the client sent it.
    Request("/_next/static/../../secret.txt", HOST,
            {"status": 200, "echo": {"target": "/_next/static/../../secret.txt"}}),
    # expires on a proxied location: the app's own Cache-Control and Expires
    # give way on a 200, and stay on a 404 (nginx's list of statuses); a 503
    # without them gets none.
    Request("/api/catalog/no-store", HOST,
            {"status": 200, "headers": {"cache-control": "max-age=3600", "expires?": True}}),
    Request("/api/catalog/items", HOST,
            {"status": 200, "headers": {"cache-control": "max-age=3600", "expires?": True}}),
    Request("/api/catalog/gone", HOST,
            {"status": 404, "body": "gone\n",
             "headers": {"cache-control": "no-store", "expires?": True}}),
    Request("/api/catalog/down", HOST, {"status": 503, "body": "app down\n", "headers": NOT_CACHED}),
]
