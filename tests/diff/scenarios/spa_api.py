"""A single-page app and its API (the React/Vue deployment guides' config):
the built dist/ folder with the index.html fallback for client-side
routes, /api/ proxied with the prefix replaced (/api/x -> /v1/x) and
the app's X-Powered-By hidden, a
maintenance page when the API is down or answers 502/503, and an old
section moved permanently."""
from scenario import NGINX_PROXY_HEADERS, PROXY_ECHO_HEADERS, Request, write_files

UPSTREAMS = {"app": "tcp"}
RESPONSE_HEADERS = ["content-type", "x-powered-by"]
ECHO_HEADERS = PROXY_ECHO_HEADERS

INDEX = "<!doctype html><div id=root></div><script src=/assets/app.js></script>\n"
MAINTENANCE = "<!doctype html><h1>Back in a minute</h1>\n"


def make_www(www):
    write_files(www, {"dist/index.html": INDEX,
                      "dist/assets/app.js": "createRoot(document.getElementById('root'));\n",
                      "dist/docs/index.html": "<!doctype html><h1>Docs</h1>\n",
                      "dist/maintenance.html": MAINTENANCE})


def nginx(c):
    # proxy_intercept_errors: without it nginx passes the app's own 503 on
    # and error_page applies to its own 502 only.
    return f"""
    upstream app {{
        server {c.upstreams["app"]};
        keepalive 8;
    }}
    server {{
        listen 127.0.0.1:{c.port};
        server_name _;
        root {c.www}/dist;
        index index.html;
        location / {{
            try_files $uri $uri/ /index.html;
        }}
        location /api/ {{
            proxy_pass http://app/v1/;{NGINX_PROXY_HEADERS}
            proxy_set_header Connection "";
            proxy_hide_header X-Powered-By;
            proxy_intercept_errors on;
            error_page 502 503 /maintenance.html;
        }}
        location /reports/ {{
            proxy_pass http://127.0.0.1:{c.dead_port}/;{NGINX_PROXY_HEADERS}
            error_page 502 503 /maintenance.html;
        }}
        location /old/ {{
            rewrite ^/old/(.*)$ /new/$1 permanent;
        }}
    }}"""


def portico(c):
    # The inline upstream: a named one ([upstream.app]) takes no path.
    maintenance = '{ 502 = "/maintenance.html", 503 = "/maintenance.html" }'
    return f"""
[[location]]
prefix = "/"
root = "{c.www}/dist"
try_files = ["$uri", "$uri/", "/index.html"]

[[location]]
prefix = "/api/"
proxy = "http://{c.upstreams["app"]}/v1/"
hide_headers = ["X-Powered-By"]
error_pages = {maintenance}

[[location]]
prefix = "/reports/"
proxy = "http://127.0.0.1:{c.dead_port}/"
error_pages = {maintenance}

[[location]]
prefix = "/old/"
rewrite = [{{ from = '^/old/(.*)$', to = '/new/$1', flag = "permanent" }}]
"""


HOST = "app.example.com"
# Redirects: nginx writes its own port into an absolute Location, so the
# client sends the Host a browser would (with the port) to compare them.
HOST_WITH_PORT = "app.example.com:{port}"
HTML = {"content-type": "text/html"}
FORWARDED = {"host": HOST, "x-forwarded-proto": "http", "x-forwarded-for": "127.0.0.1",
             "x-real-ip": "127.0.0.1"}


def spa(target):
    return Request(target, HOST, {"status": 200, "body_file": "dist/index.html", "headers": HTML})


REQUESTS = [
    spa("/"),
    Request("/assets/app.js", HOST, {"status": 200, "body_file": "dist/assets/app.js"}),
    spa("/dashboard/settings?tab=billing"),
    spa("/missing.js"),
    # "/api" names a proxied prefix without its slash: a 301 to "/api/"
    # (proxy_pass's documented special case), before any other location is
    # tried; portico does the same.
    Request("/api", HOST_WITH_PORT, {"status": 301, "location": "http://app.example.com:{port}/api/"},
            compare_body=False),
    # A folder without its slash: nginx redirects to add it (the spec
    # allows it: "may first get a redirect").
    Request("/docs", HOST_WITH_PORT, {"status": 301, "location": "http://app.example.com:{port}/docs/"},
            compare_body=False),
    Request("/docs/", HOST, {"status": 200, "body_file": "dist/docs/index.html"}),
    Request("/api/users?id=3&sort=name", HOST,
            {"status": 200, "echo": {"target": "/v1/users?id=3&sort=name", **FORWARDED}}),
    Request("/api/users", HOST, {"status": 200, "echo": {"method": "POST", "target": "/v1/users",
                                                         "body": '{"name":"ada"}'}},
            method="POST", headers=[("Content-Type", "application/json")],
            body=b'{"name":"ada"}'),
    Request("/api/", HOST, {"status": 200, "echo": {"target": "/v1/"}}),
    Request("/api/powered", HOST, {"status": 200, "headers": {"x-powered-by": None},
                                   "echo": {"target": "/v1/powered"}}),
    # The app's own 503 and a service that is not running: the maintenance
    # page, with the original status.
    Request("/api/down", HOST, {"status": 503, "body_file": "dist/maintenance.html"}),
    Request("/reports/daily", HOST, {"status": 502, "body_file": "dist/maintenance.html"}),
    Request("/old/pricing?plan=pro", HOST_WITH_PORT,
            {"status": 301, "location": "http://app.example.com:{port}/new/pricing?plan=pro"},
            compare_body=False),
    Request("/old/", HOST_WITH_PORT,
            {"status": 301, "location": "http://app.example.com:{port}/new/"}, compare_body=False),
    spa("/new/pricing"),
    # The captured part goes back into Location percent-encoded again, the
    # query kept as received.
    Request("/old/a%20b?x=1&y=%2F", HOST_WITH_PORT,
            {"status": 301, "location": "http://app.example.com:{port}/new/a%20b?x=1&y=%2F"},
            compare_body=False),
    # With a path in proxy_pass, the app gets the normalized path, the
    # prefix replaced and re-encoded, and the query as received.
    Request("/old/../api/users", HOST, {"status": 200, "echo": {"target": "/v1/users"}}),
    Request("/api/a%20b?q=%20", HOST, {"status": 200, "echo": {"target": "/v1/a%20b?q=%20"}}),
    # A folder without an index (try_files' $uri/ matches): 403; a POST
    # that falls back to a file: 405.
    Request("/assets/", HOST, {"status": 403}, compare_body=False),
    Request("/new/pricing", HOST, {"status": 405}, method="POST", body=b"plan=pro",
            compare_body=False),
]
