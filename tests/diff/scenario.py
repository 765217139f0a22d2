"""What a scenario is made of: its requests (each with what the config
intends, checked on nginx too, so that a difference says which side is
wrong), and the context its two configs are written from."""
import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Request:
    target: str
    host: str | None  # None: no Host header (with version HTTP/1.0)
    expect: dict  # what the config intends: status, location, body_file, echo, headers
    method: str = "GET"
    headers: list = field(default_factory=list)  # [(name, value)]
    body: bytes | None = None
    version: str = "HTTP/1.1"
    websocket: bool = False
    compare_body: bool = True  # False: a body each server writes its own way (an error page)
    echo_extra: list = field(default_factory=list)  # more request headers the app's echo compares
    # Why portico answers otherwise, where the spec is silent and the lead
    # has the difference to decide: reported, not failed (see report()).
    known_difference: str = ""

    def for_port(self, port):
        """"{port}" in the Host or a header stands for the port of the server
        asked: what a browser sends when it connects to that port."""
        fill = lambda text: text.replace("{port}", str(port))
        return Request(**{**self.__dict__, "host": None if self.host is None else fill(self.host),
                          "headers": [(name, fill(value)) for name, value in self.headers]})


@dataclass
class Context:
    """What one server's config is written from: its folder and port, the
    shared www copy, the upstreams' addresses ("127.0.0.1:PORT" or
    "unix:PATH", by name) and a loopback port nothing listens on."""
    folder: Path
    port: int
    www: Path
    upstreams: dict
    dead_port: int


# Every file's modification time: Last-Modified is then known, and
# If-Modified-Since can name it exactly (nginx's default `if_modified_since
# exact` answers 304 only to the exact time).
MTIME = 1767225600  # 2026-01-01 00:00:00 UTC
LAST_MODIFIED = "Thu, 01 Jan 2026 00:00:00 GMT"

# The request headers of nginx tutorials for Node apps (proxy_params and
# the like), which portico sends by default; twins need not repeat them.
NGINX_PROXY_HEADERS = """
        proxy_http_version 1.1;
        proxy_set_header Host $host;
        proxy_set_header X-Real-IP $remote_addr;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;"""
# ...and so what the app receives of them is compared everywhere.
PROXY_ECHO_HEADERS = ["host", "x-real-ip", "x-forwarded-for", "x-forwarded-proto"]


def write_files(root, files):
    """The scenario's www folder: {relative path: text}, all modified at MTIME."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (MTIME, MTIME))
