#!/usr/bin/python3
"""Chaos soak: portico (2 workers) in front of 2 Node demo-app instances and a
static root, under mixed load, through faults, for a bounded time; loopback
only; everything started here is stopped by its pid.

    tests/soak/soak.py [--seconds 600] [--portico build/portico] [--sanitized]
    tests/soak/soak.py --ci --portico build/portico      (60 s, what ctest runs)

Load: wrk keep-alive (one process per location, each counting statuses in
Lua), new connections per request, POST bodies echoed back and checked by
SHA-256, WebSocket echo sessions (deploy/demo-app/ws-client.js), server-sent
event streams, slow readers (a 4 KiB receive buffer, 20 KiB/s), slowloris
heads (our own, and slowhttptest's), clients that vanish mid-response (from
a 4 MiB file and from an event stream), and a file renamed over every
second and read back whole. HTTP/2 over TLS (ALPN h2) and h2c with prior
knowledge (h2_client.py, Debian's python3-h2): 8 streams in flight per
connection, files, proxied answers, echoed POST bodies and event streams,
a third of them asking for a coding; and keep-alive HTTP/1.1 asking for
gzip, br or zstd. Compressed answers (files compressed once and kept, a
proxied JSON, an event stream compressed chunk by chunk) are decoded and
compared byte for byte.
Faults: SIGHUP every 5 s (alternating configs: /image.jpg from disk or from
the app), SIGKILL of a random worker every 20 s (stopped first, so the
client connections it holds can be counted), one app instance killed and
restarted every 30 s.

At the end, tables:
- per client kind, outcomes, and for each failure the fault that explains it
  (within a window after the fault; an app kill's window lasts until it is
  back), or FAILED; a request the server never took (a kept-alive
  connection closed while idle, an HTTP/2 stream above a GOAWAY's last
  stream id) is sent again, as RFC 9112 9.3.1 and RFC 9113 8.7 allow, and
  listed with the reload or kill that explains it;
- per location and status, what the clients saw whole against
  portico_requests_total, the difference and what explains it: requests the
  clients could not see end (cut by a kill, vanished on purpose, the ends of
  wrk's and slowhttptest's runs) may be counted by portico under any status;
  a response a client saw whole can be missing from the counters only when
  its worker was SIGKILLed between writing it and counting it (one per kill:
  a worker is one thread); requests made and never counted ("lost") must not
  outnumber the client connections the killed workers held (each lost the
  request in flight on it, or the next one its client sent on it; an HTTP/2
  connection the streams in flight on it, at most 8), plus one per kill (the
  written, uncounted response);
- RSS and open descriptors of the master and of the workers, first third of
  the run against the last, with the bound each must stay under.
Exit 1 when a body was corrupted, a failure is not explained by a fault, a
count differs beyond what the faults explain, or a resource grew past its
bound.
"""
import argparse
import base64
import hashlib
import http.client
import io
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path

try:
    import brotli
    import zstandard

    import h2_client
except ImportError as missing:
    sys.exit(f"soak.py: {missing}. The HTTP/2 and compressed clients need Debian's python3-h2, "
             "python3-brotli and python3-zstandard (deploy/install-deps.sh --test), which only "
             "Debian's own /usr/bin/python3 imports (not a pyenv or venv python3 on the PATH).")

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "deploy/demo-app/server.js"
WS_CLIENT = ROOT / "deploy/demo-app/ws-client.js"

# How long after a fault a failure still counts as its doing; an app kill's
# window starts at the kill and ends this long after the app is back.
FAULT_WINDOW = 5.0
# Resource bounds: the last third of the run against the first third (the
# largest sample of each). The master's descriptors must not change at all.
MASTER_RSS_GROWTH_KIB = 1024
WORKER_RSS_GROWTH_KIB = 8 * 1024
WORKER_FDS_GROWTH = 32
BIG_FILE_BYTES = 4 * 1024 * 1024
SLOW_READ_RATE = 20 * 1024  # bytes a second
H2_STREAMS = 8  # streams an HTTP/2 client keeps in flight on its connection
H2_REQUESTS_PER_CONNECTION = 200
CODINGS = ("gzip", "br", "zstd")
COMPRESS_MIN_LENGTH = 256  # portico's default: a shorter file goes out as it is
# What the demo app's /events sends: five events, 100 ms apart.
EVENTS_BODY = b"".join(b"id: %d\ndata: event %d\n\n" % (i, i) for i in range(5))
CHANGING = re.compile(rb"version (\d+)\n(x{4096}\n)")
DECODE_ERRORS = (zlib.error, brotli.error, zstandard.ZstdError, ValueError)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def decoded(coding, body):
    """body decoded from coding; an error unless it is one whole stream of it
    (truncated, or with bytes after its end)."""
    if coding == "gzip":
        decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        plain = decoder.decompress(body)
        if not decoder.eof or decoder.unused_data:
            raise ValueError("not one whole gzip member")
        return plain
    if coding == "br":
        return brotli.decompress(body)
    # A stream compressed chunk by chunk may be several zstd frames.
    return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(body),
                                                      read_across_frames=True).read()


class Exchange:
    """One request of the HTTP/2 and compressed clients and the body its 200
    must carry: these bytes, or a match of this pattern where the body varies.
    coding: what Accept-Encoding asks for; expect: the Content-Encoding the
    answer must have (none below min_length)."""

    def __init__(self, location, path, body, method="GET", sent=None, coding=None, expect=None):
        self.location, self.path, self.body = location, path, body
        self.method, self.sent, self.coding, self.expect = method, sent, coding, expect

    def headers(self):
        return [("accept-encoding", self.coding)] if self.coding else []

    def problem(self, headers, body):
        """What is wrong with a 200's head and body, or None."""
        encoding = headers.get("content-encoding")
        if encoding != self.expect:
            return f"{self.path}: Content-Encoding {encoding}, expected {self.expect}"
        try:
            plain = decoded(encoding, body) if encoding else body
        except DECODE_ERRORS as error:
            return f"{self.path}: not {encoding} ({type(error).__name__})"
        if isinstance(self.body, re.Pattern):
            return None if self.body.fullmatch(plain) else f"{self.path}: no match"
        return None if plain == self.body else f"{self.path}: other bytes"


class Ledger:
    """What the clients saw, per location: responses seen whole (by status),
    and requests whose end they could not see (by reason)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.whole = {}  # (location, status) -> n
        self.cut = {}    # (location, reason) -> n
        self.kinds = {}  # client kind -> outcome -> n

    def saw(self, location, status, n=1):
        with self.lock:
            self.whole[(location, status)] = self.whole.get((location, status), 0) + n

    def lost_sight(self, location, reason, n=1):
        with self.lock:
            self.cut[(location, reason)] = self.cut.get((location, reason), 0) + n

    def outcome(self, kind, what, n=1):
        with self.lock:
            self.kinds.setdefault(kind, {}).setdefault(what, 0)
            self.kinds[kind][what] += n


# wrk, one process per location: counts each request it writes (request() is
# called once per request; wrk never resends one) and each response's status,
# and notes the second of each status other than 200.
WRK_SCRIPT = """
local paths = {%s}
local i = 0
-- wrk calls request() once before the run, to check what it returns
-- (script_verify_request): that one is never sent.
sent = -1
statuses = {}
request = function()
  i = i + 1
  sent = sent + 1
  return wrk.format("GET", paths[(i %% #paths) + 1])
end
bad = {}
response = function(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if status ~= 200 then bad[#bad + 1] = os.time() .. " " .. status end
end
local threads = {}
setup = function(thread) table.insert(threads, thread) end
done = function(summary, latency, requests)
  for _, thread in ipairs(threads) do
    io.write("sent " .. thread:get("sent") .. "\\n")
    for status, n in pairs(thread:get("statuses")) do
      io.write("status " .. status .. " " .. n .. "\\n")
    end
    for _, line in ipairs(thread:get("bad")) do io.write("bad " .. line .. "\\n") end
  end
end
"""
WRK_LOADS = [("static", ["/index.html", "/style.css"], 16),
             ("app", ["/hello", "/api/time"], 16),
             ("image", ["/image.jpg"], 8)]


class Soak:
    def __init__(self, args):
        self.args = args
        self.dir = Path(tempfile.mkdtemp(prefix="portico-soak-"))
        self.port, self.metrics_port, self.tls_port = free_port(), free_port(), free_port()
        self.app_ports = [free_port(), free_port()]
        self.apps = [None, None]
        self.portico = None
        self.wrks = []
        self.ledger = Ledger()
        self.faults = []  # [start, end, what]: failures in [start, end + window] are its doing;
        # end is None while the fault lasts
        self.kill_connections = 0  # client connections held by the workers SIGKILLed
        self.kill_h2_connections = 0  # ...of which HTTP/2 ones
        self.kills = 0
        self.h2_connections = set()  # (portico's port, client port) of the open HTTP/2 connections
        self.samples = []  # (seconds into the run, "master"/"worker", pid, rss KiB, fds)
        self.stop = threading.Event()
        self.t0 = time.time()
        self.www = self.dir / "www"
        shutil.copytree(ROOT / "www", self.www)
        (self.www / "big.bin").write_bytes(os.urandom(BIG_FILE_BYTES))
        self.image = (self.www / "image.jpg").read_bytes()
        self.make_compressed_root()
        self.write_changing(0)
        self.make_certificate()

    def make_compressed_root(self):
        """www/z/, the compressed location's files: a page, a stylesheet
        below min_length (it must come uncompressed), 256 KiB of text (many
        of the encoder's output pieces), and changing.txt (written with the
        other)."""
        (self.www / "z").mkdir()
        for name in ("index.html", "style.css"):
            shutil.copy(self.www / name, self.www / "z" / name)
        text = base64.encodebytes(os.urandom(192 * 1024))
        (self.www / "z/text.txt").write_bytes(text)

    def make_certificate(self):
        """A self-signed P-256 certificate for 127.0.0.1, the TLS listener's
        and the HTTP/2 clients' trust anchor; valid for a year, so that
        portico logs no expiry warning."""
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-nodes", "-days", "365", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(self.dir / "key.pem"),
                        "-out", str(self.dir / "cert.pem")], check=True, capture_output=True)

    # --- processes ---------------------------------------------------------
    def config(self, image_from_disk):
        image = (f'root = "{self.www}"' if image_from_disk else 'proxy = "app"')
        servers = ", ".join(f'"127.0.0.1:{p}"' for p in self.app_ports)
        locations = [("image", 'exact = "/image.jpg"', image),
                     ("big", 'exact = "/big.bin"', f'root = "{self.www}"'),
                     ("echo", 'exact = "/echo"', 'proxy = "app"'),
                     # compress: the compressed clients' event stream, compressed chunk
                     # by chunk; the other clients ask for no coding.
                     ("events", 'exact = "/events"', 'proxy = "app"\ncompress = true'),
                     ("data", 'exact = "/data.json"', 'proxy = "app"\ncompress = true'),
                     ("zstatic", 'prefix = "/z/"\nstop_regex = true', f'root = "{self.www}"\ncompress = true'),
                     ("ws", 'exact = "/ws"', 'proxy = "app"'),
                     ("slowhttptest", 'exact = "/slowhttptest"', 'respond = { status = 200, body = "ok" }'),
                     ("static", "regex = '\\.(html|css|txt)$'", f'root = "{self.www}"'),
                     ("app", 'prefix = "/"', 'proxy = "app"')]
        return (f'[server]\nlisten = ["127.0.0.1:{self.port}"]\nworkers = 2\nheader_timeout = "3s"\n'
                f'shutdown_timeout = "10s"\n[log]\nerror = "{self.dir}/error.log"\n'
                f'[tls]\nlisten = ["127.0.0.1:{self.tls_port}"]\n'
                f'certificates = [{{ cert = "{self.dir}/cert.pem", key = "{self.dir}/key.pem" }}]\n'
                f'[http2]\ncleartext = true\n'
                f'[metrics]\nlisten = "127.0.0.1:{self.metrics_port}"\n'
                f'[upstream.app]\nservers = [{servers}]\nmax_connections = 64\n'
                f'fail_timeout = "2s"\n\n' +
                "".join(f'[[location]]\nname = "{name}"\n{match}\n{action}\n\n'
                        for name, match, action in locations))

    def start_app(self, i):
        env = dict(os.environ, PORT=str(self.app_ports[i]))
        self.apps[i] = subprocess.Popen(["node", str(APP)], env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        deadline = time.time() + 15
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.app_ports[i]), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)

    def start(self):
        for i in range(2):
            self.start_app(i)
        self.plain, self.compressible = self.known_answers()
        self.image_from_disk = True
        (self.dir / "portico.toml").write_text(self.config(True))
        self.portico = subprocess.Popen([self.args.portico, "-c", str(self.dir / "portico.toml")],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while time.time() < deadline:
            # Probes count like any request: portico counts them too.
            if len(self.workers()) == 2 and self.request("probe", "app", "/hello", timeout=3) == 200:
                return
            time.sleep(0.1)
        raise RuntimeError("portico did not start: " + (self.dir / "error.log").read_text())

    def known_answers(self):
        """Path -> (location, the 200's body) for the HTTP/2 and compressed
        clients: the plain requests; and for the compressing locations also
        whether the answer must be compressed: not a file shorter than
        min_length, but always the event stream (its length is not known).
        /data.json is asked of the app itself (portico would count it)."""
        app = http.client.HTTPConnection("127.0.0.1", self.app_ports[0], timeout=5)
        app.request("GET", "/data.json")
        data = app.getresponse().read()
        app.close()
        plain = {"/index.html": ("static", (self.www / "index.html").read_bytes()),
                 "/style.css": ("static", (self.www / "style.css").read_bytes()),
                 "/image.jpg": ("image", self.image),
                 "/hello": ("app", b"Hello World"),
                 "/api/time": ("app", re.compile(rb'\{"time":\d+\}')),
                 "/events": ("events", EVENTS_BODY)}
        compressible = {}
        for name in ("index.html", "style.css", "text.txt"):
            body = (self.www / "z" / name).read_bytes()
            compressible[f"/z/{name}"] = ("zstatic", body, len(body) >= COMPRESS_MIN_LENGTH)
        compressible.update({"/z/changing.txt": ("zstatic", CHANGING, True),
                             "/data.json": ("data", data, len(data) >= COMPRESS_MIN_LENGTH),
                             "/events": ("events", EVENTS_BODY, True)})
        return plain, compressible

    def workers(self):
        children = Path(f"/proc/{self.portico.pid}/task/{self.portico.pid}/children")
        try:
            return [int(p) for p in children.read_text().split()]
        except OSError:
            return []

    @staticmethod
    def usage(pid):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            if re.search(r"State:\s+[TZ]", status):
                return None  # stopped before its kill, or dead
            return (int(re.search(r"VmRSS:\s+(\d+)", status).group(1)),
                    len(os.listdir(f"/proc/{pid}/fd")))
        except (OSError, AttributeError):
            return None

    def sample(self):
        now = time.time() - self.t0
        for role, pids in (("master", [self.portico.pid]), ("worker", self.workers())):
            for pid in pids:
                used = self.usage(pid)
                if used:
                    self.samples.append((now, role, pid) + used)

    def client_connections(self, pid):
        """Client connections among pid's descriptors: its sockets on
        portico's ports, and those no longer listed at all (reset by the
        peer, so closed, but their request may not be counted yet); and how
        many of them are our HTTP/2 clients' (by their ports)."""
        inodes = set()
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            return 0
        # /proc/net/tcp is read in pieces while other sockets come and go,
        # and a piece can skip entries: three reads, the union of what they
        # found (the stopped worker's own sockets do not change meanwhile).
        clients, listed, h2 = set(), set(), set()
        h2_ports = set(self.h2_connections)
        for _ in range(3):
            for table in ("tcp", "tcp6", "udp", "udp6", "unix"):
                for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
                    fields = line.split()
                    if table == "unix":
                        listed.add(fields[6] if len(fields) > 6 else "")
                        continue
                    listed.add(fields[9])
                    local_port = int(fields[1].rsplit(":", 1)[1], 16)
                    peer_port = int(fields[2].rsplit(":", 1)[1], 16)
                    if table == "tcp" and fields[3] != "0A" and local_port in (self.port, self.tls_port):
                        clients.add(fields[9])
                        if (local_port, peer_port) in h2_ports:
                            h2.add(fields[9])
        return len((clients | (inodes - listed)) & inodes), len(h2 & inodes)

    def shutdown(self):
        for process in self.wrks + [self.portico] + self.apps:
            if process and process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.wrks + [self.portico] + self.apps:
            if process:
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()

    # --- one request -------------------------------------------------------
    def request(self, kind, location, path, method="GET", body=None, timeout=5, check=None):
        """One request on a new connection, entered in the ledger; returns the
        status, or None when the response was not seen whole."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request(method, path, body=body)
            response = connection.getresponse()
            status = response.status
            answer = response.read()
        except (OSError, http.client.HTTPException) as error:
            self.ledger.lost_sight(location, "cut: " + type(error).__name__)
            self.count(kind, False, type(error).__name__, "cut", location)
            return None
        finally:
            connection.close()
        self.ledger.saw(location, status)
        if status == 200 and check and not check(answer):
            self.ledger.outcome(kind, "CORRUPTED")
            return status
        self.count(kind, status == 200, str(status), "status", location)
        return status

    def fault(self, what, start, end=0.0):
        """A fault from `start` to `end` (None: until fault_over is called)."""
        entry = [start, start if end == 0.0 else end, what]
        self.faults.append(entry)
        return entry

    def explaining(self, at, failure, proxied, slack=0.0):
        """The fault a failure at `at` follows closely enough to be its
        doing, or None. A request cut: a killed worker, or (proxied) an app
        instance down, which cuts an event stream mid-body; an error status:
        an app instance down (proxied requests only). A reload explains
        nothing: its drain must lose no request; but it may close an idle
        connection, or refuse new streams, before taking a request ("not
        taken": sent again), as a kill may. A protocol error (a GOAWAY with an
        error code, a frame the client refuses) no fault explains."""
        causes = set()
        for start, end, what in self.faults:
            if start - slack <= at <= (end if end is not None else at) + FAULT_WINDOW:
                causes.add("SIGKILL" if what.startswith("SIGKILL") else
                           "app restart" if what.startswith("app") else what)
        if failure == "not taken":
            return next((c for c in ("SIGHUP", "SIGKILL") if c in causes), None)
        if failure == "protocol":
            return None
        if failure == "cut" and "SIGKILL" in causes:
            return "SIGKILL"
        if proxied and "app restart" in causes:
            return "app restart"
        return None

    def count(self, kind, ok, detail, failure, location, at=None, slack=0.0):
        if ok:
            self.ledger.outcome(kind, "ok")
            return
        # /image.jpg goes to the app under every other config.
        proxied = location in ("app", "echo", "events", "ws", "image", "data")
        cause = self.explaining(time.time() if at is None else at, failure, proxied, slack)
        if cause:
            verb = "not taken" if failure == "not taken" else "failed"
            self.ledger.outcome(kind, f"{verb} after {cause} ({detail})")
        else:
            self.ledger.outcome(kind, f"FAILED ({detail})")

    # --- clients -----------------------------------------------------------
    def new_connections(self):
        paths = [("/hello", "app"), ("/index.html", "static"), ("/api/time", "app"),
                 ("/image.jpg", "image")]
        while not self.stop.is_set():
            path, location = random.choice(paths)
            self.request("new connection per request", location, path)

    def echo(self):
        while not self.stop.is_set():
            body = os.urandom(random.randint(1, 64 * 1024))
            digest = hashlib.sha256(body).digest()
            self.request("POST echo (sha256)", "echo", "/echo", "POST", body,
                         check=lambda answer: hashlib.sha256(answer).digest() == digest)

    def events(self):
        while not self.stop.is_set():
            self.request("server-sent events (5 each)", "events", "/events",
                         check=lambda body: body.count(b"data: event") == 5)

    def websockets(self):
        kind = "WebSocket echo sessions"
        while not self.stop.is_set():
            try:
                result = subprocess.run(["node", str(WS_CLIENT), f"127.0.0.1:{self.port}"],
                                        capture_output=True, text=True, timeout=30)
                out, code = result.stdout + result.stderr, result.returncode
            except subprocess.TimeoutExpired:
                out, code = "", "timeout"
            head = re.search(r"no 101:\nHTTP/1\.1 (\d{3})", out)
            if code == 0:
                self.ledger.saw("ws", 101)  # portico counts a session when it ends
                self.ledger.outcome(kind, "ok")
            elif head:  # an error answered instead of the upgrade, seen whole
                self.ledger.saw("ws", int(head.group(1)))
                self.count(kind, False, head.group(1), "status", "ws")
            else:  # the tunnel or the handshake was cut
                self.ledger.lost_sight("ws", "cut: session" if "101 Switching" in out else "cut: handshake")
                self.count(kind, False, f"exit {code}", "cut", "ws")
            time.sleep(0.5)

    def vanishing(self):
        """Reads the start of a response, then closes: portico counts 499
        (or the status, when it ended the response first)."""
        kind = "clients gone mid-response"
        while not self.stop.is_set():
            path, location = random.choice([("/big.bin", "big"), ("/events", "events")])
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
                    s.sendall(f"GET {path} HTTP/1.1\r\nHost: soak\r\n\r\n".encode())
                    answer = s.recv(100)
                self.ledger.lost_sight(location, "vanished on purpose")
                self.ledger.outcome(kind, "gone after a response began" if answer else "gone (nothing read)")
            except OSError as error:
                self.ledger.lost_sight(location, "cut: " + type(error).__name__)
                self.count(kind, False, type(error).__name__, "cut", location)
            time.sleep(0.05)

    def slow_reader(self):
        """Reads /image.jpg (100 KiB) through a 4 KiB receive buffer at 20 KiB/s."""
        kind = "slow readers (100 KiB at 20 KiB/s)"
        while not self.stop.is_set():
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.settimeout(10)
            data = b""
            try:
                s.connect(("127.0.0.1", self.port))
                s.sendall(b"GET /image.jpg HTTP/1.1\r\nHost: soak\r\nConnection: close\r\n\r\n")
                while True:
                    chunk = s.recv(2048)
                    if not chunk:
                        break
                    data += chunk
                    time.sleep(len(chunk) / SLOW_READ_RATE)
            except OSError as error:
                self.ledger.lost_sight("image", "cut: " + type(error).__name__)
                self.count(kind, False, type(error).__name__, "cut", "image")
                continue
            finally:
                s.close()
            head, _, body = data.partition(b"\r\n\r\n")
            match = re.match(rb"HTTP/1\.1 (\d{3})", head)
            length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
            if not match or not length or len(body) != int(length.group(1)):
                self.ledger.lost_sight("image", "cut: short response")
                self.count(kind, False, "short response", "cut", "image")
                continue
            status = int(match.group(1))
            self.ledger.saw("image", status)
            if status == 200 and body != self.image:
                self.ledger.outcome(kind, "CORRUPTED")
            else:
                self.count(kind, status == 200, str(status), "status", "image")

    def slowloris(self):
        kind = "slowloris heads (408 expected)"
        while not self.stop.is_set():
            answer = b""
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=10) as s:
                    s.sendall(b"GET / HTTP/1.1\r\nHost: soak\r\n")
                    for _ in range(20):
                        time.sleep(0.5)
                        try:
                            s.sendall(b"X-Slow: 1\r\n")
                        except OSError:
                            # The 408 and the close came during the sleep:
                            # the line met the closed socket. The answer
                            # may still wait to be read.
                            s.settimeout(1)
                            answer += s.recv(4096)
                            break
                        s.settimeout(0.01)
                        try:
                            answer += s.recv(4096)
                            break
                        except socket.timeout:
                            s.settimeout(10)
                    s.settimeout(5)
                    while not answer.endswith(b"408 Request Timeout\n") and len(answer) < 4096:
                        chunk = s.recv(4096)
                        if not chunk:
                            break
                        answer += chunk
            except OSError as error:
                if not answer:
                    self.ledger.lost_sight("-", "cut: " + type(error).__name__)
                    self.count(kind, False, type(error).__name__, "cut", "-")
                    continue
            match = re.match(rb"HTTP/1\.1 (\d{3})", answer)
            if match:
                self.ledger.saw("-", int(match.group(1)))
                self.count(kind, match.group(1) == b"408", match.group(1).decode(), "status", "-")
            else:
                self.ledger.lost_sight("-", "cut: no answer")
                self.count(kind, False, "no answer", "cut", "-")

    def slowhttptest(self):
        """Rounds of 40 slowloris connections from slowhttptest. It reports
        connections, not statuses: each that connected is a head portico
        counts as 408 (under "-") unless it was cut; its one probe (at
        second 0; -p is longer than the round) is a request to
        /slowhttptest."""
        kind = "slowhttptest slowloris rounds (40 connections)"
        while not self.stop.is_set():
            result = subprocess.run(
                ["slowhttptest", "-H", "-c", "40", "-r", "20", "-i", "1", "-l", "30", "-p", "100",
                 "-u", f"http://127.0.0.1:{self.port}/slowhttptest"],
                capture_output=True, text=True, timeout=60)
            text = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout)
            errors = re.findall(r"error:\s+(\d+)", text)
            errors = int(errors[-1]) if errors else 0
            self.ledger.lost_sight("-", "slowhttptest heads (it reports no statuses)", 40 - errors)
            self.ledger.lost_sight("slowhttptest", "slowhttptest's probe (it reports no status)")
            ok = result.returncode == 0 and "No open connections left" in text
            self.count(kind, ok and errors == 0, f"{errors} connect errors", "cut", "-")
            time.sleep(1)

    def changing_file(self):
        pattern = re.compile(rb"version (\d+)\n(x{4096}\n)")
        while not self.stop.is_set():
            self.request("file renamed over every second", "static", "/changing.txt",
                         check=lambda body: pattern.fullmatch(body) is not None)
            time.sleep(0.01)

    def write_changing(self, version):
        for folder in (self.www, self.www / "z"):
            staged = folder / ".changing.tmp"
            staged.write_bytes(f"version {version}\n".encode() + b"x" * 4096 + b"\n")
            os.rename(staged, folder / "changing.txt")

    # --- HTTP/2 and compressed clients ---------------------------------------
    def plain_exchange(self):
        """A request like the HTTP/1.1 clients' (no coding asked)."""
        path = random.choice(list(self.plain) + ["/echo"])
        if path == "/echo":
            body = os.urandom(random.randint(1, 64 * 1024))
            return Exchange("echo", path, body, "POST", sent=body)
        location, body = self.plain[path]
        return Exchange(location, path, body)

    def compressed_exchange(self):
        """A request asking for one coding."""
        path = random.choice(list(self.compressible))
        location, body, compressed = self.compressible[path]
        coding = random.choice(CODINGS)
        return Exchange(location, path, body, coding=coding, expect=coding if compressed else None)

    def settle(self, kind, exchange, status, headers, body):
        """A response seen whole, checked and entered in the ledger."""
        self.ledger.saw(exchange.location, status)
        problem = exchange.problem(headers, body) if status == 200 else None
        if problem:
            self.ledger.outcome(kind, f"CORRUPTED ({problem})")
        elif status == 200:
            self.ledger.outcome(kind, f"ok ({exchange.expect} decoded)" if exchange.expect else "ok")
        else:
            self.count(kind, False, str(status), "status", exchange.location)

    def lost(self, kind, exchange, why, failure="cut"):
        """A request whose end the client could not see."""
        self.ledger.lost_sight(exchange.location, "cut: " + why)
        self.count(kind, False, why, failure, exchange.location)

    def resent(self, kind, why):
        """A request the server never took, sent again: not in the ledger
        (nothing was counted for it), but listed, and a failure unless a
        reload's drain or a kill is near."""
        self.count(kind, False, why + ", sent again", "not taken", "-")

    def h2_tls(self):
        self.h2_client(f"HTTP/2 over TLS (ALPN h2, {H2_STREAMS} streams at once)", tls=True)

    def h2c(self):
        self.h2_client(f"h2c, prior knowledge ({H2_STREAMS} streams at once)", tls=False)

    def h2_client(self, kind, tls):
        """HTTP/2 over TLS (ALPN h2) or h2c with prior knowledge: H2_STREAMS
        streams in flight, H2_REQUESTS_PER_CONNECTION on a connection, then a
        new one; a third of the requests ask for a coding."""
        again = []  # requests the server did not take, for the next connection
        while not self.stop.is_set():
            port = self.tls_port if tls else self.port
            try:
                connection = h2_client.Connection(port, str(self.dir / "cert.pem") if tls else None)
            except (OSError, h2_client.ProtocolFailure) as error:
                # No request was made on it: a failure, but not a lost request.
                protocol = isinstance(error, h2_client.ProtocolFailure)
                self.count(kind, False, f"connect: {error if protocol else type(error).__name__}",
                           "protocol" if protocol else "cut", "-")
                time.sleep(0.1)
                continue
            # Registered before its first request: a kill's exposure counts
            # the streams an HTTP/2 connection can have in flight.
            key = (port, connection.local_port)
            self.h2_connections.add(key)
            try:
                with connection:
                    self.h2_streams(kind, connection, again)
            finally:
                self.h2_connections.discard(key)

    def h2_streams(self, kind, connection, again):
        """Streams on one connection until it made its share, was told to go
        (GOAWAY) or broke; each end entered in the ledger."""
        started = 0
        while True:
            try:
                while (connection.accepting() and connection.in_flight() < H2_STREAMS and
                       started < H2_REQUESTS_PER_CONNECTION and not self.stop.is_set()):
                    exchange = again.pop() if again else (
                        self.compressed_exchange() if random.random() < 1 / 3 else self.plain_exchange())
                    connection.request(exchange, exchange.method, exchange.path, exchange.headers(),
                                       exchange.sent)
                    started += 1
                if connection.in_flight() == 0:
                    return
                ended = connection.receive()
            except (OSError, h2_client.ProtocolFailure) as error:
                protocol = isinstance(error, h2_client.ProtocolFailure)
                why = str(error) if protocol else type(error).__name__
                if connection.last_stream_id is not None:
                    why += " after a drain's GOAWAY"  # streams up to its last id were to finish
                self.h2_ended(kind, error.ended if protocol else [], again)
                for exchange in connection.abandon():
                    self.lost(kind, exchange, why, "protocol" if protocol else "cut")
                return
            self.h2_ended(kind, ended, again)

    def h2_ended(self, kind, ended, again):
        """Enters the streams that ended: seen whole, cut, or not taken (to
        be sent again on the next connection)."""
        for end in ended:
            if end.refused:
                again.append(end.tag)
                self.resent(kind, end.why)
            elif end.why:
                self.lost(kind, end.tag, end.why)
            else:
                self.settle(kind, end.tag, end.status, end.headers, end.body)

    def compressed_http1(self):
        """Keep-alive HTTP/1.1 asking for gzip, br or zstd."""
        kind = "compressed HTTP/1.1 keep-alive (gzip, br, zstd)"
        connection, fresh = None, True
        while not self.stop.is_set():
            exchange = self.compressed_exchange()
            while True:
                if connection is None:
                    connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                    fresh = True
                outcome = self.http1_exchange(kind, connection, exchange, fresh)
                fresh = False
                if outcome != "kept":
                    connection.close()
                    connection = None
                if outcome != "again":
                    break

    def http1_exchange(self, kind, connection, exchange, fresh):
        """One request on a kept-alive connection: "kept" (answered, the
        connection stays), "closed" (answered or lost, the connection is
        done), or "again": a kept-alive connection closed before answering,
        which RFC 9112 9.3.1 lets a client retry on a new one (a reload's
        drain closes idle connections)."""
        try:
            connection.request(exchange.method, exchange.path, headers=dict(exchange.headers()))
            response = connection.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as error:
            if not fresh:
                self.resent(kind, "no answer on a kept-alive connection: " + type(error).__name__)
                return "again"
            self.lost(kind, exchange, type(error).__name__)
            return "closed"
        except (OSError, http.client.HTTPException) as error:
            self.lost(kind, exchange, type(error).__name__)
            return "closed"
        try:
            body = response.read()
        except (OSError, http.client.HTTPException) as error:
            self.lost(kind, exchange, type(error).__name__)
            return "closed"
        self.settle(kind, exchange, response.status,
                    {name.lower(): value for name, value in response.getheaders()}, body)
        return "closed" if response.will_close else "kept"

    # --- wrk -----------------------------------------------------------------
    def start_wrk(self):
        for location, paths, connections in WRK_LOADS:
            script = self.dir / f"wrk-{location}.lua"
            script.write_text(WRK_SCRIPT % ", ".join(f'"{p}"' for p in paths))
            self.wrks.append(subprocess.Popen(
                ["wrk", "-t1", f"-c{connections}", f"-d{self.args.seconds}s", "-s", str(script),
                 f"http://127.0.0.1:{self.port}/"], stdout=subprocess.PIPE, text=True))

    def collect_wrk(self):
        """Enters wrk's counts in the ledger; returns its lines for the table."""
        lines = []
        for (location, paths, connections), wrk in zip(WRK_LOADS, self.wrks):
            out = wrk.communicate(timeout=60)[0]
            sent = sum(int(n) for n in re.findall(r"^sent (\d+)$", out, re.M))
            seen = 0
            kind = f"wrk -c{connections} keep-alive {location}"
            for status, n in re.findall(r"^status (\d+) (\d+)$", out, re.M):
                self.ledger.saw(location, int(status), int(n))
                seen += int(n)
            for second, status in re.findall(r"^bad (\d+) (\d+)$", out, re.M):
                # wrk's clock counts whole seconds: the status came within a
                # second after `second`.
                self.count(kind, False, status, "status", location, at=int(second), slack=1.0)
            # One per connection is in flight when wrk stops; the rest were cut.
            self.ledger.lost_sight(location, "wrk: no response seen (cut, or in flight at its end)",
                                   sent - seen)
            self.ledger.outcome(kind, "requests written", sent)
            self.ledger.outcome(kind, "responses seen", seen)
            errors = re.search(r"Socket errors: (.*)", out)
            lines.append(f"{location} ({' '.join(paths)}): {errors.group(1) if errors else 'no socket errors'}")
        return lines

    # --- faults ------------------------------------------------------------
    def kill_worker(self):
        workers = self.workers()
        if not workers:
            return
        pid = random.choice(workers)
        # Stopped, it accepts and ends nothing more: the client connections
        # it holds are the requests its death can take along.
        os.kill(pid, signal.SIGSTOP)
        deadline = time.time() + 2
        while time.time() < deadline:  # kill() returns before the stop takes effect
            try:
                if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T":
                    break
            except OSError:
                break
            time.sleep(0.001)
        connections, h2 = self.client_connections(pid)
        self.kill_connections += connections
        self.kill_h2_connections += h2
        self.kills += 1
        self.fault("SIGKILL worker", time.time())
        os.kill(pid, signal.SIGKILL)

    def restart_app(self):
        i = random.randrange(2)
        fault = self.fault(f"app {i} restart", time.time(), None)
        self.apps[i].kill()
        self.apps[i].wait()
        time.sleep(1)
        self.start_app(i)
        # Until fail_timeout (2 s) passes, portico may still avoid it.
        fault[1] = time.time() + 2

    def chaos(self, seconds):
        start = time.time()
        next_reload, next_kill, next_app, next_file, next_sample = 5, 20, 30, 1, 0
        version = 0
        self.reloads = self.app_restarts = 0
        while time.time() - start < seconds:
            now = time.time() - start
            if now >= next_sample:
                self.sample()
                next_sample += 1
            if now >= next_file:
                version += 1
                self.write_changing(version)
                next_file += 1
            if now >= next_reload:
                self.image_from_disk = not self.image_from_disk
                (self.dir / "portico.toml").write_text(self.config(self.image_from_disk))
                self.fault("SIGHUP", time.time())
                self.portico.send_signal(signal.SIGHUP)
                self.reloads += 1
                next_reload += 5
            if now >= next_kill:
                self.kill_worker()
                next_kill += 20
            if now >= next_app:
                self.restart_app()
                self.app_restarts += 1
                next_app += 30
            time.sleep(0.1)
        self.files_rewritten = version

    # --- the run -----------------------------------------------------------
    def run(self):
        self.start()
        self.t0 = time.time()
        self.sample()
        # A new master maps a new, zeroed counters region, so no reset is
        # needed: before the load, portico has counted the probes and nothing
        # else (a probe cut client-side may or may not be counted).
        start_counts = self.metrics()
        start_expected = (dict(self.ledger.whole), sum(self.ledger.cut.values()))
        self.start_wrk()
        clients = [self.new_connections, self.echo, self.echo, self.events, self.websockets,
                   self.vanishing, self.slow_reader, self.slowloris, self.slowhttptest,
                   self.changing_file, self.h2_tls, self.h2c, self.compressed_http1]
        threads = [threading.Thread(target=self.guarded, args=(client,), daemon=True)
                   for client in clients]
        for thread in threads:
            thread.start()
        self.chaos(self.args.seconds)
        self.stop.set()
        wrk_lines = self.collect_wrk()
        for thread in threads:
            thread.join(timeout=70)
        # Every client has gone: the old workers finish draining (at most
        # the grace period) and portico ends what the last clients left.
        deadline = time.time() + 20
        while time.time() < deadline and (len(self.workers()) > 2 or self.active() != 0):
            time.sleep(0.2)
        time.sleep(1)
        self.sample()
        counted = self.metrics()
        log = (self.dir / "error.log").read_text(errors="replace")
        self.shutdown()
        return self.report(wrk_lines, start_counts, start_expected, counted, log)

    def guarded(self, client):
        """Runs one client; an exception it did not expect fails the run
        instead of silently ending that part of the load."""
        try:
            client()
        except Exception as error:
            self.ledger.outcome(client.__name__, f"FAILED (the client stopped: {error!r})")

    def scrape(self):
        connection = http.client.HTTPConnection("127.0.0.1", self.metrics_port, timeout=5)
        try:
            connection.request("GET", "/metrics")
            return connection.getresponse().read().decode()
        finally:
            connection.close()

    def active(self):
        match = re.search(r"^portico_connections_active (\d+)$", self.scrape(), re.M)
        return int(match.group(1)) if match else -1

    def metrics(self):
        counts = {}
        for location, code, n in re.findall(
                r'^portico_requests_total\{location="([^"]*)",code="([^"]*)"\} (\d+)$',
                self.scrape(), re.M):
            counts[(location, int(code) if code.isdigit() else code)] = int(n)
        return counts

    # --- the tables --------------------------------------------------------
    def report(self, wrk_lines, start_counts, start_expected, counted, log):
        problems = []
        print(f"\nsoak: {self.args.seconds} s, faults: {self.reloads} reloads, {self.kills} worker "
              f"kills, {self.app_restarts} app restarts, {self.files_rewritten} file rewrites\n")

        print("| client | outcome | count |\n|---|---|---|")
        for kind, outcomes in sorted(self.ledger.kinds.items()):
            for what, n in sorted(outcomes.items()):
                print(f"| {kind} | {what} | {n} |")
                if what.startswith("FAILED"):
                    problems.append(f"{kind}: {n} {what}")
                if what.startswith("CORRUPTED"):
                    problems.append(f"{kind}: {n} corrupted bodies")
        print("\nwrk socket errors: " + "; ".join(wrk_lines))

        whole, unseen = start_expected
        if any(start_counts.get(key, 0) < n for key, n in whole.items()) or \
                sum(start_counts.values()) > sum(whole.values()) + unseen:
            problems.append(f"counters at the start {start_counts} are not the probes {whole}")
        self.accounting(counted, problems)
        self.resources(problems)

        for warning in ("counts may slip", "no room left in the counters"):
            if warning in log:
                problems.append(f"error log: '{warning}'")
        print("\nresult:", "ok" if not problems else "FAILED\n- " + "\n- ".join(problems))
        return 1 if problems else 0

    def accounting(self, counted, problems):
        whole, cut = self.ledger.whole, self.ledger.cut
        locations = sorted({loc for loc, _ in list(whole) + list(counted)} |
                           {loc for loc, _ in cut})
        print("\nRequests per location and status: seen whole by the clients against "
              "portico_requests_total\n")
        print("| location | status | clients saw whole | portico counted | difference |")
        print("|---|---|---|---|---|")
        extra_total = missing_total = 0
        for location in locations:
            statuses = sorted({s for loc, s in list(whole) + list(counted) if loc == location},
                              key=str)
            extra = missing = 0
            for status in statuses:
                seen, got = whole.get((location, status), 0), counted.get((location, status), 0)
                diff = got - seen
                extra += max(diff, 0)
                missing += max(-diff, 0)
                print(f"| {location} | {status} | {seen} | {got} | {diff:+d} |" if diff else
                      f"| {location} | {status} | {seen} | {got} | 0 |")
            unseen = sum(n for (loc, _), n in cut.items() if loc == location)
            if extra > unseen:
                problems.append(f"location {location}: portico counted {extra} requests the clients "
                                f"did not see whole, but only {unseen} ended out of their sight")
            extra_total += extra
            missing_total += missing
        print("\nRequests whose end the clients could not see (portico may count them under any "
              "status, or not at all when their worker was killed)\n")
        print("| location | why | count |\n|---|---|---|")
        for (location, reason), n in sorted(cut.items()):
            print(f"| {location} | {reason} | {n} |")
        made = sum(whole.values()) + sum(cut.values())
        total = sum(counted.values())
        lost = made - total
        # An HTTP/2 connection loses the streams in flight on it: at most H2_STREAMS.
        exposure = self.kill_connections + (H2_STREAMS - 1) * self.kill_h2_connections
        bound = exposure + self.kills
        print(f"\nclients made {made} requests: {sum(whole.values())} seen whole, "
              f"{sum(cut.values())} not; portico counted {total}.")
        print(f"- counted more than seen whole, per status: {extra_total}, each covered by a request "
              f"not seen whole at its location (checked per location)")
        print(f"- seen whole but not counted (net of the above, per status): {missing_total}; "
              f"at most one per SIGKILL ({self.kills}): the response its worker had written, "
              f"not yet counted")
        print(f"- made, never counted (lost): {lost}; at most one per client connection the "
              f"{self.kills} killed workers held ({self.kill_connections}: the request in flight on "
              f"it, or the next one sent on it), {H2_STREAMS} per HTTP/2 one "
              f"({self.kill_h2_connections} of them: the streams in flight), plus one per kill "
              f"(that written, uncounted response): {bound}")
        if missing_total > self.kills:
            problems.append(f"{missing_total} responses seen whole were not counted "
                            f"(at most {self.kills} explained)")
        if lost < 0:
            problems.append(f"portico counted {-lost} requests more than the clients made")
        if lost > bound:
            problems.append(f"{lost} requests never counted, more than the {bound} the kills explain")

    def resources(self, problems):
        seconds = self.args.seconds
        first = [s for s in self.samples if 0 < s[0] <= seconds / 3]
        last = [s for s in self.samples if s[0] >= 2 * seconds / 3]
        # One sample() call's samples share its time: the first is taken
        # before the load, the last once the clients have left.
        start = [s for s in self.samples if s[0] == self.samples[0][0]]
        end = [s for s in self.samples if s[0] == self.samples[-1][0]]
        print("\nResources (largest sample in the first and the last third of the run, "
              "asserted; and before the load started and after the clients left; "
              f"{len(self.samples)} samples, every second)\n")
        print("| process | measure | start | first third | last third | end | growth | bound | |")
        print("|---|---|---|---|---|---|---|---|---|")
        rss_bound = {"master": MASTER_RSS_GROWTH_KIB, "worker": WORKER_RSS_GROWTH_KIB}
        fds_bound = {"master": 0, "worker": WORKER_FDS_GROWTH}
        for role in ("master", "worker"):
            for measure, index, unit, bound in (("RSS", 3, " KiB", rss_bound[role]),
                                                ("open descriptors", 4, "", fds_bound[role])):
                at_start, a, b, at_end = (max((s[index] for s in window if s[1] == role), default=0)
                                          for window in (start, first, last, end))
                asserted = not (measure == "RSS" and self.args.sanitized)
                ok = b - a <= bound
                verdict = ("ok" if ok else "GREW") if asserted else "not asserted (ASan quarantine)"
                print(f"| {role}{'s' if role == 'worker' else ''} | {measure} | {at_start}{unit} | "
                      f"{a}{unit} | {b}{unit} | {at_end}{unit} | {b - a:+d}{unit} | {bound}{unit} | "
                      f"{verdict} |")
                if asserted and not ok:
                    problems.append(f"{role} {measure} grew by {b - a}{unit}, over {bound}{unit}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--ci", action="store_true", help="the CI version: 60 s")
    parser.add_argument("--portico", default=str(ROOT / "build/portico"))
    parser.add_argument("--sanitized", action="store_true",
                        help="an ASan build: RSS is reported, not asserted (the quarantine grows)")
    args = parser.parse_args()
    if args.ci:
        args.seconds = 60
    soak = Soak(args)
    try:
        return soak.run()
    finally:
        soak.shutdown()
        shutil.rmtree(soak.dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
