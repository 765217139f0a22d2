"""A raw HTTP/1.x client: the request goes out byte for byte as the scenario
wrote it (a target with `..` or `%2F`, a Host with a port or a trailing dot,
no Host at all), one connection per request, read to its end."""
import socket
from dataclasses import dataclass, field

TIMEOUT = 5


@dataclass
class Answer:
    status: int | str  # "closed": the connection closed without a response (nginx 444)
    headers: list = field(default_factory=list)  # [(lowercase name, value)] in order
    body: bytes = b""

    def header(self, name):
        values = [value for key, value in self.headers if key == name]
        return ", ".join(values) if values else None


def request_bytes(request, connection):
    lines = [f"{request.method} {request.target} {request.version}"]
    if request.host is not None:
        lines.append(f"Host: {request.host}")
    lines += [f"{name}: {value}" for name, value in request.headers]
    lines.append(f"Connection: {connection}")
    if request.body is not None:
        lines.append(f"Content-Length: {len(request.body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (request.body or b"")


def parse_head(head):
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = []
    for line in header_lines:
        name, _, value = line.partition(":")
        headers.append((name.strip().lower(), value.strip()))
    return int(status_line.split(" ")[1]), headers


def dechunk(data):
    body = b""
    while data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        body, data = body + data[:size], data[size + 2:]
    return body


def read_until(sock, data, marker):
    while marker not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def fetch(port, request):
    """fetch_once, where a server that does not answer in time, refuses or
    resets is an answer too ("timeout", "refused", "reset": a crashed
    server shows as a difference, not as a traceback)."""
    try:
        return fetch_once(port, request)
    except socket.timeout:
        return Answer("timeout")
    except ConnectionRefusedError:
        return Answer("refused")
    except (ConnectionResetError, BrokenPipeError):
        return Answer("reset")


def fetch_once(port, request):
    """Sends one request to 127.0.0.1:port and reads the answer; a WebSocket
    upgrade gets a line sent through the tunnel, and the body is what came
    back through it (the app's echo line, then the line)."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        websocket = request.websocket
        connection = "Upgrade" if websocket else "close"
        sock.sendall(request_bytes(request, connection))
        try:
            data = read_until(sock, b"", b"\r\n\r\n")
        except ConnectionResetError:
            data = b""  # nginx's 444 may reset instead of closing
        if b"\r\n\r\n" not in data:
            return Answer("closed")
        head, _, rest = data.partition(b"\r\n\r\n")
        status, headers = parse_head(head)
        answer = Answer(status, headers)
        if websocket and status == 101:
            rest = read_until(sock, rest, b"\n")
            sock.sendall(b"ping through the tunnel\n")
            answer.body = read_until(sock, rest, b"tunnel\n")
            return answer
        length = answer.header("content-length")
        if websocket and length is not None and request.method != "HEAD":
            # Refused upgrade: the connection stays open (no Connection: close
            # was sent), so the body ends at its length.
            while len(rest) < int(length) and (chunk := sock.recv(65536)):
                rest += chunk
            answer.body = rest
            return answer
        while chunk := sock.recv(65536):  # Connection: close: the body ends with the connection
            rest += chunk
        if request.method == "HEAD" or status in (204, 304):
            return answer
        chunked = "chunked" in (answer.header("transfer-encoding") or "").lower()
        answer.body = dechunk(rest) if chunked else rest
        return answer
