"""Meteor behind nginx (the Meteor guides' config): two app instances made
sticky with ip_hash (SockJS keeps a session on one instance), the
WebSocket upgrade passed on, the hashed bundle files cached for a year,
the app's public/ folder served from disk and everything else proxied;
behind a load balancer (127.0.0.1, trusted: the realip module), so the
client, for the app and for ip_hash, is the one X-Forwarded-For names."""
from scenario import NGINX_PROXY_HEADERS, PROXY_ECHO_HEADERS, Request, write_files

UPSTREAMS = {"meteor1": "tcp", "meteor2": "tcp"}
INSTANCE_VARIES = True  # which of the two ip_hash picks: compared by check() below
RESPONSE_HEADERS = ["cache-control", "upgrade", "sec-websocket-accept"]
ECHO_HEADERS = PROXY_ECHO_HEADERS + ["upgrade", "sec-websocket-key", "sec-websocket-version"]

BUNDLE = "programs/web.browser"
HASHED_JS = "0123456789abcdef0123456789abcdef01234567.js"
HASHED_CSS = "89abcdef0123456789abcdef0123456789abcdef.css"
IMMUTABLE = "public, max-age=31536000, immutable"


def make_www(www):
    write_files(www, {f"{BUNDLE}/{HASHED_JS}": "Package['meteor']={};\n",
                      f"{BUNDLE}/{HASHED_CSS}": ".body{color:#333}\n",
                      "public/robots.txt": "User-agent: *\nDisallow: /admin\n",
                      "public/images/logo.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>\n"})


def nginx(c):
    return f"""
    map $http_upgrade $connection_upgrade {{
        default upgrade;
        ''      close;
    }}
    upstream meteor {{
        ip_hash;
        server {c.upstreams["meteor1"]};
        server {c.upstreams["meteor2"]};
    }}
    server {{
        listen 127.0.0.1:{c.port};
        server_name meteor.example.com;
        set_real_ip_from 127.0.0.1;
        real_ip_header X-Forwarded-For;
        real_ip_recursive on;
        location ~* "^/[a-z0-9]{{40}}\\.(css|js)$" {{
            root {c.www}/{BUNDLE};
            add_header Cache-Control "{IMMUTABLE}";
        }}
        location / {{
            root {c.www}/public;
            try_files $uri @meteor;
        }}
        location @meteor {{
            proxy_pass http://meteor;{NGINX_PROXY_HEADERS}
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
        }}
    }}"""


def portico(c):
    # No Upgrade/Connection lines: portico passes a WebSocket upgrade on by
    # itself (`websocket` defaults to true). root + proxy is nginx's
    # `try_files $uri @meteor`.
    return f"""trusted_proxies = ["127.0.0.1"]

[upstream.meteor]
servers = ["{c.upstreams["meteor1"]}", "{c.upstreams["meteor2"]}"]
balance = "ip_hash"

[[location]]
regex = '(?i)^/[a-z0-9]{{40}}\\.(css|js)$'
root = "{c.www}/{BUNDLE}"
cache_control = "{IMMUTABLE}"

[[location]]
prefix = "/"
root = "{c.www}/public"
proxy = "meteor"
"""


HOST = "meteor.example.com"
FORWARDED = {"host": HOST, "x-forwarded-proto": "http", "x-forwarded-for": "127.0.0.1",
             "x-real-ip": "127.0.0.1", "upgrade": None}
WEBSOCKET_HEADERS = [("Upgrade", "websocket"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
                     ("Sec-WebSocket-Version", "13")]
UPGRADED = {"status": 101, "headers": {"upgrade": "websocket",
                                       "sec-websocket-accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="},
            "echo": {**FORWARDED, "upgrade": "websocket", "connection": "upgrade",
                     "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
                     "sec-websocket-version": "13"}}


def websocket(target):
    return Request(target, HOST, {**UPGRADED, "echo": {**UPGRADED["echo"], "target": target}},
                   headers=WEBSOCKET_HEADERS, websocket=True, echo_extra=["connection"])


REQUESTS = [
    Request(f"/{HASHED_JS}", HOST, {"status": 200, "body_file": f"{BUNDLE}/{HASHED_JS}",
                                    "headers": {"cache-control": IMMUTABLE}}),
    Request(f"/{HASHED_CSS}", HOST, {"status": 200, "body_file": f"{BUNDLE}/{HASHED_CSS}",
                                     "headers": {"cache-control": IMMUTABLE}}),
    Request("/robots.txt", HOST, {"status": 200, "body_file": "public/robots.txt",
                                  "headers": {"cache-control": None}}),
    Request("/images/logo.svg", HOST, {"status": 200, "body_file": "public/images/logo.svg"}),
    # A folder is not a file: `try_files $uri` passes it to the app.
    Request("/", HOST, {"status": 200, "echo": {"target": "/", **FORWARDED}}),
    Request("/images/missing.png", HOST, {"status": 200, "echo": {"target": "/images/missing.png"}}),
    Request("/sockjs/info?cb=x7a2", HOST, {"status": 200, "echo": {"target": "/sockjs/info?cb=x7a2"}}),
    Request("/methods", HOST, {"status": 200, "echo": {"method": "POST", "body": '{"msg":"connect"}'}},
            method="POST", headers=[("Content-Type", "application/json")],
            body=b'{"msg":"connect"}'),
    websocket("/websocket"),
    websocket("/sockjs/527/ab12cd34/websocket"),
    # From the balancer: the client is the rightmost untrusted entry, and
    # X-Forwarded-For goes on with it appended ($proxy_add_x_forwarded_for
    # after realip).
    *[Request(target, HOST, {"status": 200, "echo": {
        "target": target, "x-real-ip": "198.51.100.7",
        "x-forwarded-for": "6.6.6.6, 198.51.100.7, 198.51.100.7"}},
        headers=[("X-Forwarded-For", "6.6.6.6, 198.51.100.7")])
      for target in ("/sockjs/info?cb=lb1", "/sockjs/info?cb=lb2", "/")],
    Request("/sockjs/info?cb=lb3", HOST, {"status": 200, "echo": {
        "x-real-ip": "203.0.113.9", "x-forwarded-for": "203.0.113.9, 127.0.0.1, 203.0.113.9"}},
        headers=[("X-Forwarded-For", "203.0.113.9, 127.0.0.1")]),
]


def check(answers):
    """ip_hash: the proxied requests of one client (as the app saw it,
    X-Real-IP) reached one instance."""
    reached = {}
    for reduced, instance in answers:
        body = reduced.get("body")
        if instance is not None:
            client = (body.get("echo") or body)["headers"]["x-real-ip"]
            reached.setdefault(client, set()).add(instance)
    return [f"ip_hash spread client {client} over {sorted(instances)}"
            for client, instances in reached.items() if len(instances) > 1]
