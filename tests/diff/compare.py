"""An answer reduced to what both servers must agree on, the check of what
the config intends, and the side-by-side view of a difference."""
import gzip
import json
import re
import urllib.parse

ECHO_FIELDS = ("instance", "method", "target", "body")


def without_port(text, port):
    """Each server listens on its own port: where it shows (a Location nginx
    makes absolute, $server_port sent upstream) it reads "{port}"."""
    return re.sub(rf"(?<![0-9]){port}(?![0-9])", "{port}", text)


def reduce_echo(line, echo_headers, port):
    """The app's echo, reduced to what the scenario compares: which app
    answered, what it received."""
    echo = json.loads(line)
    reduced = {name: echo[name] for name in ECHO_FIELDS}
    reduced["headers"] = {name: echo["headers"].get(name) for name in echo_headers}
    return json.loads(without_port(json.dumps(reduced), port)), echo["instance"]


def reduce_body(answer, echo_headers, port):
    """(comparable body, the app instance or None): the echo JSON reduced;
    after a WebSocket 101 the echo line and what came back through the
    tunnel; any other body as text (or its size, when binary)."""
    body = answer.body
    if (answer.header("content-encoding") or "").lower() == "gzip" and body:
        # Two compressors make different bytes of the same text: compared
        # decoded (the coding itself is compared as a header).
        try:
            body = gzip.decompress(body)
        except (OSError, EOFError):
            return "<gzip that does not decode>", None
    try:
        if answer.status == 101:
            line, _, tunnelled = body.partition(b"\n")
            echo, instance = reduce_echo(line, echo_headers, port)
            return {"echo": echo, "tunnelled": tunnelled.decode()}, instance
        if (answer.header("content-type") or "").startswith("application/json"):
            return reduce_echo(body, echo_headers, port)
    except (ValueError, KeyError):
        pass
    try:
        return body.decode(), None
    except UnicodeDecodeError:
        return f"<{len(body)} bytes>", None


def media_type(value):
    """Content-Type as both must agree on: the media type. nginx's
    mime.types sends no charset and the old application/javascript; portico's
    table (the spec's) adds charset=utf-8 to text and says text/javascript
    (RFC 9239 made it the one name)."""
    if value is None:
        return None
    media = value.split(";")[0].strip().lower()
    return "text/javascript" if media == "application/javascript" else media


def location(answer, request, port, any_port=False):
    """Resolved against the URL the client asked (http://HOST/target), so
    that "/new/x" and "http://HOST/new/x" compare equal. any_port: nginx's
    own redirects (a folder's slash) name the port it listens on
    (port_in_redirect), which on port 80 is none; the port is dropped."""
    value = answer.header("location")
    if value is None:
        return None
    base = f"http://{request.host or 'no-host'}{request.target}"
    resolved = without_port(urllib.parse.urljoin(base, value), port)
    return resolved.replace(":{port}/", "/", 1) if any_port else resolved


# nginx's own error page ("<html>...<center>nginx</center>") and portico's
# ("404 Not Found\n", text/plain): each server's way of saying the status.
OWN_PAGE = re.compile(r"^(<html>\r\n<head><title>(\d{3}) .*<center>nginx[^<]*</center>.*|(\d{3}) [A-Za-z -]+\n)$",
                      re.S)


def own_page(body):
    """"(own page)" for a server's built-in page, else the body."""
    if isinstance(body, str) and OWN_PAGE.match(body):
        return "(the server's own page for the status)"
    return body


def reduce(answer, request, port, scenario):
    """{field: value} of one answer: status, location, the scenario's
    response headers ("name?": present or not), the body."""
    reduced = {"status": answer.status,
               "location": location(answer, request, port,
                                    getattr(scenario, "OWN_ERROR_PAGES", False))}
    for spec in scenario.RESPONSE_HEADERS:
        name = spec.rstrip("?")
        value = answer.header(name)
        if name == "content-type":
            if not request.compare_body:
                continue  # the type of a body each server writes its own way
            value = media_type(value)
        reduced[spec] = (value is not None) if spec.endswith("?") else (
            value if value is None else without_port(value, port))
    body, instance = reduce_body(answer, scenario.ECHO_HEADERS + request.echo_extra, port)
    if getattr(scenario, "INSTANCE_VARIES", False) and isinstance(body, dict):
        # Which instance a balancer picks is each server's own choice.
        (body.get("echo") or body).pop("instance", None)
    if getattr(scenario, "OWN_ERROR_PAGES", False):
        body = own_page(body)
        own_head = (request.method == "HEAD" and isinstance(answer.status, int)
                    and answer.status >= 300 and reduced.get("content-type") in ("text/html",
                                                                                 "text/plain"))
        if reduced.get("content-type") and (body == "(the server's own page for the status)"
                                            or own_head):
            reduced["content-type"] = "(own)"
    if request.compare_body:
        reduced["body"] = body
    return reduced, instance


def unmet_expectations(reduced, request, www):
    """What the answer does not do of what the config intends."""
    unmet = []
    expect = dict(request.expect)
    if "body_file" in expect:
        expect["body"] = (www / expect.pop("body_file")).read_text()
    echo = expect.pop("echo", {})
    headers = expect.pop("headers", {})
    for name, wanted in [*expect.items(), *headers.items()]:
        if reduced.get(name) != wanted:
            unmet.append(f"{name}: {reduced.get(name)!r}, intended {wanted!r}")
    body = reduced.get("body")
    received = body.get("echo", body) if isinstance(body, dict) else {}
    for name, wanted in echo.items():
        got = received.get(name) if name in ECHO_FIELDS else received.get("headers", {}).get(name)
        if got != wanted:
            unmet.append(f"the app received {name} {got!r}, intended {wanted!r}")
    return unmet


def side_by_side(nginx, portico, width=60):
    """The two reduced answers, field by field, "!!" where they differ."""
    lines = [f"   {'field':<22}{'nginx':<{width}}  portico"]
    for name in [*nginx, *(name for name in portico if name not in nginx)]:
        left, right = nginx.get(name), portico.get(name)
        left_lines = json.dumps(left, indent=1, sort_keys=True).splitlines()
        right_lines = json.dumps(right, indent=1, sort_keys=True).splitlines()
        mark = "!!" if left != right else "  "
        for i in range(max(len(left_lines), len(right_lines))):
            left_text = left_lines[i] if i < len(left_lines) else ""
            right_text = right_lines[i] if i < len(right_lines) else ""
            label = name if i == 0 else ""
            lines.append(f"{mark} {label:<22}{left_text[:width]:<{width}}  {right_text[:width]}")
    return "\n".join(lines)
