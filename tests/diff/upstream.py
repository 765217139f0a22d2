"""The app behind both servers: a small HTTP/1.1 server (keep-alive,
threaded) on a loopback port or a Unix socket that answers with what it
RECEIVED, so a difference in what nginx and portico forward shows up in the
compared bodies.

Routes (on the path's last segment, so they work under any prefix the
servers rewrite to):
  .../down      503 "app down" (an app that is down: error pages)
  .../powered   the echo, with X-Powered-By: Express (hide_headers)
  .../no-store  the echo, with the app's own Cache-Control: no-store and
                an Expires in the past (expires replaces them)
  .../gone      404 "gone", with the same two headers (expires leaves them)
  Upgrade: websocket  101, then one line of echo JSON, then the bytes it
                reads, back, until the client closes
  anything else 200, the echo as JSON:
                {"instance", "method", "target", "headers", "body"}
"""
import base64
import hashlib
import http.server
import json
import os
import socketserver
import threading

WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
# Tokens are case-insensitive (RFC 9110 7.6.1, 7.8): "Upgrade" and
# "upgrade" are the same request, so the echo lowercases these values.
TOKEN_HEADERS = {"connection", "upgrade"}
APP_CACHE_HEADERS = [("Cache-Control", "no-store"), ("Expires", "Thu, 01 Jan 1970 00:00:00 GMT")]


def echo_of(handler, body):
    headers = {}
    for name, value in handler.headers.items():
        name = name.lower()
        value = value.lower() if name in TOKEN_HEADERS else value
        # A repeated header is echoed as the list a proxy must keep in order.
        headers[name] = headers[name] + ", " + value if name in headers else value
    return {"instance": handler.server.instance, "method": handler.command,
            "target": handler.path, "headers": headers,
            "body": body.decode("utf-8", "replace")}


class EchoHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as Node's servers

    def log_message(self, *args):  # quiet: the harness prints what differs
        pass

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                chunk = self.rfile.read(size + 2)[:size]
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b""):
                        pass  # trailers
                    return body
                body += chunk
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def answer(self, status, body, content_type, extra=()):
        self.send_response(status)
        if self.close_connection:
            # Said, as Node says it: without it nginx keeps an HTTP/1.1
            # answer's connection (its proxy_http_version 1.0 sends
            # "Connection: close", but it reads the answer's), and a POST
            # that finds the connection closed under it is a 502, not retried.
            self.send_header("Connection", "close")
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def tunnel(self):
        key = self.headers.get("Sec-WebSocket-Key", "")
        accept = base64.b64encode(hashlib.sha1((key + WEBSOCKET_GUID).encode()).digest())
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept.decode())
        self.end_headers()
        self.wfile.write(json.dumps(echo_of(self, b""), sort_keys=True).encode() + b"\n")
        self.wfile.flush()
        while data := self.connection.recv(4096):
            self.wfile.write(data)
            self.wfile.flush()
        self.close_connection = True

    def handle_any(self):
        body = self.read_body()
        last_segment = self.path.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
        if self.headers.get("Upgrade", "").lower() == "websocket":
            return self.tunnel()
        if last_segment == "down":
            return self.answer(503, b"app down\n", "text/plain")
        if last_segment == "gone":
            return self.answer(404, b"gone\n", "text/plain", APP_CACHE_HEADERS)
        extra = {"powered": [("X-Powered-By", "Express")],
                 "no-store": APP_CACHE_HEADERS}.get(last_segment, [])
        echo = json.dumps(echo_of(self, body), sort_keys=True).encode()
        self.answer(200, echo, "application/json", extra)

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = handle_any


class TcpEchoServer(http.server.ThreadingHTTPServer):
    daemon_threads = True


class UnixEchoServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        connection, _ = super().get_request()
        return connection, ("unix", 0)  # BaseHTTPRequestHandler wants a pair


class Upstream:
    """One echo server, on "127.0.0.1:PORT" or "unix:PATH" (its .address,
    as nginx and portico spell it), served from a thread until stop()."""

    def __init__(self, instance, socket_path=None):
        if socket_path:
            self.server = UnixEchoServer(str(socket_path), EchoHandler)
            os.chmod(socket_path, 0o666)
            self.address = f"unix:{socket_path}"
        else:
            self.server = TcpEchoServer(("127.0.0.1", 0), EchoHandler)
            self.address = f"127.0.0.1:{self.server.server_address[1]}"
        self.server.instance = instance
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
