"""A canonical host (the "www to apex" config of every nginx tutorial): the
www name redirected to the apex, the apex serving the site with
X-Frame-Options on every answer (`always`: its 404s too), and a second host
sent to https. No server is marked default_server, so the first one,
the www redirect, answers unknown hosts and requests without Host."""
from scenario import Request, write_files

UPSTREAMS = {}
RESPONSE_HEADERS = ["x-frame-options"]
ECHO_HEADERS = []

INDEX = "<!doctype html><h1>Example</h1>\n"


def make_www(www):
    write_files(www, {"site/index.html": INDEX, "site/style.css": "h1{font-size:3em}\n"})


def nginx(c):
    return f"""
    server {{
        listen 127.0.0.1:{c.port};
        server_name www.example.com;
        return 301 http://example.com$request_uri;
    }}
    server {{
        listen 127.0.0.1:{c.port};
        server_name example.com;
        root {c.www}/site;
        add_header X-Frame-Options DENY always;
    }}
    server {{
        listen 127.0.0.1:{c.port};
        server_name shop.example.com;
        return 301 https://$host$request_uri;
    }}"""


def portico(c):
    return f"""
[[site]]
names = ["www.example.com"]

  [[site.location]]
  prefix = "/"
  redirect = {{ to = "http://example.com$request_uri", status = 301 }}

[[site]]
names = ["example.com"]

  [[site.location]]
  prefix = "/"
  root = "{c.www}/site"
  headers = {{ "X-Frame-Options" = "DENY" }}
  headers_always = true

[[site]]
names = ["shop.example.com"]

  [[site.location]]
  prefix = "/"
  redirect = {{ to = "https://$host$request_uri", status = 301 }}
"""


def to_apex(target, host):
    """The www redirect: $request_uri is the target as received, raw."""
    return Request(target, host, {"status": 301, "location": f"http://example.com{target}",
                                  "headers": {"x-frame-options": None}}, compare_body=False)


def apex(target, status, method="GET", **expect):
    return Request(target, "example.com", {"status": status, "headers": {"x-frame-options": "DENY"},
                                           **expect},
                   method=method, compare_body=status == 200)


def to_https(target, host):
    return Request(target, host, {"status": 301, "location": f"https://shop.example.com{target}"},
                   compare_body=False)


REQUESTS = [
    to_apex("/pricing?plan=pro", "www.example.com"),
    # Host matching ignores case and the port.
    to_apex("/", "WWW.Example.COM:{port}"),
    to_apex("/a%20b/../c?next=%2Fhome", "www.example.com"),
    apex("/", 200, body_file="site/index.html"),
    apex("/style.css", 200, body_file="site/style.css"),
    apex("/", 200, method="HEAD", body=""),
    apex("/missing", 404),  # `always`: on errors too
    apex("/", 405, method="POST"),
    to_https("/cart?id=1", "shop.example.com"),
    # $host: lowercase, without the port or a trailing dot.
    to_https("/cart", "Shop.Example.com.:{port}"),
    # No site names it: the first server of the listener (the www redirect).
    to_apex("/x?y=1", "unknown.example.net"),
    Request("/x", None, {"status": 301, "location": "http://example.com/x"}, version="HTTP/1.0",
            compare_body=False),
]
