"""The convert cases: for each tests/convert/NAME.conf, the app instances
it proxies to, the requests both servers get, and the directives
`portico convert` must refuse for it (none for most). Every case gets the
same www folder and the COMMON requests, which probe what such configs
route (files, SPA routes, the API, redirects, hosts, encodings, ranges, a
WebSocket upgrade); a case adds its own. Only the differential matters
here: nginx's answer is the reference, so `expect` stays empty."""
import gzip
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "diff"))
from scenario import MTIME, Request, write_files  # noqa: E402

RESPONSE_HEADERS = ["content-type", "cache-control", "content-encoding", "content-range",
                    "x-frame-options", "x-content-type-options", "strict-transport-security",
                    "x-powered-by", "expires?", "upgrade", "sec-websocket-accept", "x-served-by",
                    "www-authenticate"]
ECHO_HEADERS = ["host", "x-real-ip", "x-forwarded-for", "x-forwarded-proto", "x-forwarded-host",
                "x-forwarded-port", "upgrade", "accept-encoding"]

STYLE = "body{font-family:sans-serif;margin:0 auto;max-width:60em}\n" * 8
APP_JS = "import {createRoot} from 'react-dom/client';\ncreateRoot(document.body);\n" * 6


def make_www(www):
    write_files(www, {
        "index.html": "<!doctype html><title>App</title><div id=root></div>\n",
        "about.html": "<!doctype html><h1>About</h1>\n",
        "app.js": APP_JS,
        "style.css": STYLE,
        "big.txt": "".join(f"{i:04d}\n" for i in range(400)),
        "404.html": "<!doctype html><h1>Not here</h1>\n",
        "50x.html": "<!doctype html><h1>Back in a minute</h1>\n",
        "docs/index.html": "<!doctype html><h1>Docs</h1>\n",
        "static/logo.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>\n",
        "assets/data.json": '{"items": [1, 2, 3]}\n',
        "public/robots.txt": "User-agent: *\nDisallow: /admin\n",
        "public/favicon.ico": "ICO\n",
    })
    packed = www / "app.js.gz"
    packed.write_bytes(gzip.compress(APP_JS.encode(), mtime=0))
    import os
    os.utime(packed, (MTIME, MTIME))


HOST = "example.com"
GZIP = [("Accept-Encoding", "gzip")]
WEBSOCKET = [("Upgrade", "websocket"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
             ("Sec-WebSocket-Version", "13")]


# portico's static files answer any method but GET and HEAD with 405 (the
# spec); nginx looks for the file first, and answers a missing one 404.
POST_TO_FILES = {("POST", "/api/items", HOST): "a POST to a static location: nginx 404 (no "
                 "such file), portico 405 with Allow: GET, HEAD (spec: Static files)"}


def get(target, host=HOST, **options):
    return Request(target, host, {}, **options)


COMMON = [
    get("/"),
    get("/index.html"),
    get("/about"),
    get("/app.js", headers=GZIP),
    get("/style.css", headers=GZIP),
    get("/style.css", method="HEAD"),
    get("/big.txt", headers=[("Range", "bytes=10-19")]),
    get("/missing.png"),
    get("/docs"),
    get("/docs/"),
    get("/api/users?id=1"),
    get("/api/items", method="POST", headers=[("Content-Type", "application/json")],
        body=b'{"name":"x"}'),
    get("/api/down"),
    get("/socket.io/?EIO=4&transport=websocket", headers=WEBSOCKET, websocket=True,
        echo_extra=["sec-websocket-key"]),
    get("/static/logo.svg"),
    get("/", host="www.example.com"),
    get("/about", host="other.test"),
    get("/old/page?x=1"),
    get("/assets/data.json"),
    get("/robots.txt"),
]


@dataclass
class Case:
    upstreams: dict = field(default_factory=lambda: {"app": "tcp"})
    extra: list = field(default_factory=list)
    refusals: list = field(default_factory=list)  # directive names `portico convert` refuses
    instance_varies: bool = False
    # (method, target, host): why portico answers otherwise, by the spec
    known: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)  # each server's folder: relative path -> text

    @property
    def requests(self):
        return COMMON + self.extra


CASES = {
    "spa_api": Case(extra=[get("/settings/profile"), get("/api/powered")]),
    "express_tutorial": Case(),
    "nextjs": Case(extra=[get("/_next/static/app.js"), get("/_next/static/missing.js")]),
    "meteor_websocket": Case(upstreams={"one": "tcp", "two": "tcp"}, instance_varies=True),
    "canonical_host": Case(upstreams={}, known=POST_TO_FILES, extra=[get("/about?x=1", host="www.example.com"),
                                                get("/about", host=None, version="HTTP/1.0")]),
    "www_redirect": Case(upstreams={}, extra=[get("/about?x=1", host="example.com")]),
    "https_redirect": Case(extra=[get("/.well-known/acme-challenge/token")]),
    "several_servers": Case(upstreams={"app": "tcp", "admin": "tcp"},
                            extra=[get("/", host="admin.example.com"),
                                   get("/api/users", host="admin.example.com"),
                                   get("/", host="static.example.com")]),
    "upstream_pool": Case(upstreams={"one": "tcp", "two": "tcp"}, instance_varies=True),
    "static_alias": Case(extra=[get("/static/app.js", headers=GZIP), get("/media/logo.svg"),
                                get("/favicon.ico")]),
    "error_pages": Case(extra=[get("/api/gone"), get("/nothing/here")]),
    "rewrites": Case(extra=[get("/blog/2024/hello"), get("/blog/2024/hello?ref=x"),
                            get("/v1/users"), get("/legacy/about")]),
    "gzip": Case(extra=[get("/big.txt", headers=GZIP), get("/api/users", headers=GZIP)]),
    "security_headers": Case(extra=[get("/api/gone"), get("/static/logo.svg", method="HEAD")]),
    "unix_socket": Case(upstreams={"app": "unix"}),
    "default_proxy_headers": Case(extra=[get("/api/powered"), get("/api/no-store"),
                                         get("/backend/x?y=1")]),
    "regex_locations": Case(known={("GET", "/exact", HOST): "return 200 TEXT: portico's respond "
                                   "is text/plain, nginx's default_type here application/"
                                   "octet-stream (said in a comment of the converted file)"},
                            extra=[get("/images/a.png"), get("/files/logo.SVG"),
                                   get("/exact"), get("/exact/more")]),
    "named_fallback": Case(upstreams={"app": "tcp"}, extra=[get("/public/robots.txt")]),
    "limits_access": Case(
        files={"htpasswd": "admin:$apr1$portico1$hmtXAViM6.lVaeASBCzXo/\n"},  # admin:secret
        extra=[get("/public/robots.txt"), get("/internal/robots.txt"),
               get("/docs/"), get("/docs/", headers=[("Authorization", "Basic YWRtaW46c2VjcmV0")]),
               get("/docs/", headers=[("Authorization", "Basic YWRtaW46d3Jvbmc=")]),
               get("/limited/robots.txt"), get("/limited/robots.txt"),
               get("/limited/robots.txt"), get("/limited/favicon.ico")]),
    "refusals": Case(refusals=["limit_rate", "if", "map", "sub_filter"]),
    # A second request for a stored answer gets the first one's echo (its
    # Accept-Encoding), what the app marks no-store never does.
    "proxy_cache": Case(extra=[get("/api/cached?v=1"), get("/api/cached?v=1", headers=GZIP),
                               get("/api/cached?v=1", method="HEAD"),
                               get("/api/no-store"), get("/api/no-store", headers=GZIP),
                               get("/api/gone"), get("/api/gone", headers=GZIP),
                               get("/api/items", method="POST", body=b"second"),
                               get("/api/users?id=1", headers=GZIP)]),
}
