"""Two sites on one listener (a small VPS's config): example.org serves its
files and proxies /api/ to its app, every subdomain (*.example.org) goes to
a blog app on a Unix socket, and a default_server drops unknown hosts
(`return 444`: the connection closes without an answer)."""
from scenario import NGINX_PROXY_HEADERS, PROXY_ECHO_HEADERS, Request, write_files

UPSTREAMS = {"app": "tcp", "blog": "unix"}
RESPONSE_HEADERS = []
ECHO_HEADERS = PROXY_ECHO_HEADERS


def make_www(www):
    write_files(www, {"org/index.html": "<!doctype html><h1>example.org</h1>\n",
                      "org/about.html": "<!doctype html><h1>About</h1>\n"})


# The proxied requests' Host is lowercase without a port: there nginx's
# `Host $host` and portico's default (the Host as received) send the same.


def nginx(c):
    return f"""
    upstream blog {{
        server {c.upstreams["blog"]};
        keepalive 8;
    }}
    server {{
        listen 127.0.0.1:{c.port} default_server;
        server_name _;
        return 444;
    }}
    server {{
        listen 127.0.0.1:{c.port};
        server_name example.org;
        root {c.www}/org;
        location /api/ {{
            proxy_pass http://{c.upstreams["app"]};{NGINX_PROXY_HEADERS}
        }}
    }}
    server {{
        listen 127.0.0.1:{c.port};
        server_name *.example.org;
        location / {{
            proxy_pass http://blog;{NGINX_PROXY_HEADERS}
            proxy_set_header Connection "";
        }}
    }}"""


def portico(c):
    # names = []: the site answers only as the default (nginx's `_`).
    return f"""
[upstream.blog]
servers = ["{c.upstreams["blog"]}"]

[[site]]
names = []
default = true

  [[site.location]]
  prefix = "/"
  respond = {{ status = 444 }}

[[site]]
names = ["example.org"]

  [[site.location]]
  prefix = "/"
  root = "{c.www}/org"

  [[site.location]]
  prefix = "/api/"
  proxy = "http://{c.upstreams["app"]}"

[[site]]
names = ["*.example.org"]

  [[site.location]]
  prefix = "/"
  proxy = "blog"
"""


def forwarded(host):
    return {"host": host, "x-forwarded-proto": "http", "x-forwarded-for": "127.0.0.1",
            "x-real-ip": "127.0.0.1"}


def to_blog(target, host, sent_host):
    return Request(target, host, {"status": 200, "echo": {"instance": "blog", "target": target,
                                                          **forwarded(sent_host)}})


def dropped(host, version="HTTP/1.1"):
    return Request("/", host, {"status": "closed"}, version=version)


REQUESTS = [
    Request("/", "example.org", {"status": 200, "body_file": "org/index.html"}),
    Request("/about.html", "EXAMPLE.org", {"status": 200, "body_file": "org/about.html"}),
    Request("/missing.html", "example.org", {"status": 404}, compare_body=False),
    Request("/api/items?page=2", "example.org",
            {"status": 200, "echo": {"instance": "app", "target": "/api/items?page=2",
                                     **forwarded("example.org")}}),
    to_blog("/posts/1?draft=0", "blog.example.org", "blog.example.org"),
    # A leading wildcard covers deeper names too (nginx).
    to_blog("/feed.xml", "a.b.example.org", "a.b.example.org"),
    to_blog("/", "news.example.org", "news.example.org"),
    dropped("unknown.example.com"),
    dropped("example.org.evil.com"),
    dropped("example.orgx"),
    dropped(None, version="HTTP/1.0"),
    Request("/", "example.org:{port}", {"status": 200, "body_file": "org/index.html"}),
    Request("/", "example.org.", {"status": 200, "body_file": "org/index.html"}),
    # An empty Host names no site: 400 ("client sent invalid host header"
    # in nginx), not the default site.
    Request("/", "", {"status": 400}, compare_body=False),
    # After the drops: the sites still answer.
    Request("/", "example.org", {"status": 200, "body_file": "org/index.html"}),
]
