#!/usr/bin/env python3
"""Helpers for tests/bench/run.sh: /proc readings, config templates, parsing
wrk/ab/h2load/callgrind/strace output, the 10k idle connections client and the
markdown report. Standard library only.

    bench.py tree PID                  PID and all its descendants (by /proc/*/stat ppid)
    bench.py cpu PID...                utime+stime of these processes, in clock ticks
    bench.py clearhwm PID...           reset VmHWM (peak RSS) through /proc/PID/clear_refs
    bench.py mem PID...                "HWM_KB RSS_KB" summed over these processes
    bench.py check [--tls CA] PORT PATH...  GET each path on 127.0.0.1:PORT (https, certificate
                                       checked against CA, with --tls); exit 1 unless all 200
    bench.py tls-probe PORT CA PATH KIND  openssl s_client: what the server negotiates, and
                                       whether it resumes a session; one JSON line
    bench.py template IN OUT TAGS K=V...
    bench.py record --out F ...        one measured cell -> one JSON line
    bench.py na --out F ...            a cell that could not run -> one JSON line
    bench.py callgrind-total FILE      the Ir total of a callgrind.out file
    bench.py callgrind-objects FILE... the Ir of each object (binary, library), as JSON
    bench.py strace-summary FILE       the calls of a strace -c summary, as JSON
    bench.py conns PORT N PATH         open N keep-alive connections, one request each, hold
    bench.py css FILE SIZE             SIZE bytes of CSS rules, each different (compression cells)
    bench.py wire --out F PORT PATH ACCEPT [K=V...]  one GET with that Accept-Encoding: its
                                       bytes on the wire (head, body as framed), one JSON line
    bench.py render --dir D --out F    the markdown report from D/*.jsonl
"""
import argparse
import json
import os
import re
import selectors
import signal
import socket
import statistics
import sys
import time
import zlib

CLK_TCK = os.sysconf("SC_CLK_TCK")


# --- /proc ------------------------------------------------------------------

def _stat_fields(pid):
    with open(f"/proc/{pid}/stat") as f:
        data = f.read()
    # The command may hold spaces and parentheses: split after the last ')'.
    rest = data[data.rindex(")") + 2:].split()
    return rest  # rest[0] is field 3 (state)


def tree(root):
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            ppid = int(_stat_fields(name)[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [int(root)]
    while todo:
        pid = todo.pop()
        if not os.path.exists(f"/proc/{pid}"):
            continue
        out.append(pid)
        todo.extend(children.get(pid, []))
    return sorted(out)


def cpu_split(pids):
    """(utime, stime) summed over these processes, in clock ticks."""
    user = system = 0
    for pid in pids:
        try:
            fields = _stat_fields(pid)
        except OSError:
            continue
        user += int(fields[11])    # utime (field 14)
        system += int(fields[12])  # stime (field 15)
    return user, system


def switches(pids):
    """Voluntary and involuntary context switches of these processes' threads, as 'v,i'."""
    vol = invol = 0
    for pid in pids:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for task in tasks:
            vol += status_value(f"{pid}/task/{task}", "voluntary_ctxt_switches")
            invol += status_value(f"{pid}/task/{task}", "nonvoluntary_ctxt_switches")
    return f"{vol},{invol}"


def cpu_ticks(pids):
    return sum(cpu_split(pids))


_ksoftirqd_pids = {}


def ksoftirqd_ticks(cpu):
    """utime+stime of the kernel thread ksoftirqd/CPU: softirq work (loopback
    delivery, mostly) that the kernel moved out of the task that raised it.
    Work done in the task's own context is in the task's stime already."""
    if cpu not in _ksoftirqd_pids:
        for name in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{name}/comm") as f:
                    if f.read().strip() == f"ksoftirqd/{cpu}":
                        _ksoftirqd_pids[cpu] = name
                        break
            except OSError:
                continue
    pid = _ksoftirqd_pids.get(cpu)
    return cpu_ticks([pid]) if pid else 0


def cpu_lines():
    """busy and total ticks of cpu0 and cpu1 from /proc/stat, and the ticks of
    ksoftirqd/0 and ksoftirqd/1, as 'b0,t0,b1,t1,k0,k1'."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            parts = line.split()
            if parts[0] in ("cpu0", "cpu1"):
                v = [int(x) for x in parts[1:9]]  # user nice system idle iowait irq softirq steal
                total = sum(v)
                out[parts[0]] = (total - v[3] - v[4], total)
    b0, t0 = out.get("cpu0", (0, 0))
    b1, t1 = out.get("cpu1", (0, 0))
    return f"{b0},{t0},{b1},{t1},{ksoftirqd_ticks(0)},{ksoftirqd_ticks(1)}"


def status_value(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def listeners(port):
    """pids holding a listening TCP socket on PORT (any address)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(parts[9])
        except OSError:
            pass
    pids = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            for fd in os.listdir(f"/proc/{name}/fd"):
                link = os.readlink(f"/proc/{name}/fd/{fd}")
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    pids.add(int(name))
                    break
        except OSError:
            continue
    return sorted(pids)


def clear_hwm(pids):
    for pid in pids:
        try:
            with open(f"/proc/{pid}/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            pass


# --- templates ----------------------------------------------------------------

TAG = re.compile(r"\s*#@([a-z0-9-]+)\s*$")


def render_template(src, dst, tags, values):
    """Lines ending in `#@tag` are kept only when tag is in the set `tags`
    (the marker is removed); @KEY@ is replaced by its value. A string of
    tags is refused: `in` would test substrings, and "keepalive" is in
    "nokeepalive"."""
    if isinstance(tags, str):
        raise TypeError("render_template: tags must be a set of names, not a string")
    out = []
    with open(src) as f:
        for line in f:
            line = line.rstrip("\n")
            m = TAG.search(line)
            if m:
                if m.group(1) not in tags:
                    continue
                line = line[:m.start()]
            for key, value in values.items():
                line = line.replace(f"@{key}@", value)
            out.append(line)
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")


# --- compression cells ---------------------------------------------------------

def write_css(path, size):
    """`size` bytes of stylesheet rules, each different (margins and colours
    vary), so that no server takes a shortcut on repeated bytes."""
    rules, length, i = [], 0, 0
    while length < size:
        rule = f".card-{i} {{ margin: {i % 17}px; color: #{(i * 7919) % 0xffffff:06x}; }}\n"
        rules.append(rule)
        length += len(rule)
        i += 1
    with open(path, "w") as f:
        f.write("".join(rules)[:size])


def wire_bytes(port, path, accept):
    """One keep-alive GET as wrk sends it (HTTP/1.1, Host, the Accept-Encoding
    when given): the bytes of the response's head and of its body as framed
    (chunk sizes included), its codings, and the body's length once unchunked
    (and, for gzip, once decompressed)."""
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    if accept:
        request += f"Accept-Encoding: {accept}\r\n"
    request += "\r\n"
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(request.encode())
    data = b""

    def more():
        nonlocal data
        chunk = sock.recv(65536)
        if not chunk:
            raise OSError("connection closed before the response's end")
        data += chunk

    while b"\r\n\r\n" not in data:
        more()
    head_len = data.index(b"\r\n\r\n") + 4
    lines = data[:head_len].decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    body = b""
    pos = head_len
    if "content-length" in headers:
        end = head_len + int(headers["content-length"])
        while len(data) < end:
            more()
        body, pos = data[head_len:end], end
    elif "chunked" in headers.get("transfer-encoding", "").lower():
        while True:
            while b"\r\n" not in data[pos:]:
                more()
            line_end = data.index(b"\r\n", pos)
            size = int(data[pos:line_end].split(b";")[0], 16)
            while len(data) < line_end + 2 + size + 2:
                more()
            body += data[line_end + 2:line_end + 2 + size]
            pos = line_end + 2 + size + 2
            if size == 0:
                break
    else:
        raise OSError("a response without a length nor chunks")
    sock.close()
    r = {"status": int(lines[0].split()[1]), "head_bytes": head_len,
         "body_wire_bytes": pos - head_len, "body_bytes": len(body),
         "content_encoding": headers.get("content-encoding", ""),
         "transfer_encoding": headers.get("transfer-encoding", "")}
    if r["content_encoding"] == "gzip":
        r["decoded_bytes"] = len(zlib.decompress(body, 31))
    elif not r["content_encoding"]:
        r["decoded_bytes"] = len(body)
    return r


# --- load tool output -------------------------------------------------------------

def _ms(text):
    m = re.match(r"([\d.]+)(us|ms|s|m)$", text)
    if not m:
        return None
    value, unit = float(m.group(1)), m.group(2)
    return value * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


def parse_wrk(text):
    r = {"requests": 0, "rps": 0.0, "p50_ms": None, "p99_ms": None,
         "non2xx3xx": 0, "socket_errors": 0}
    m = re.search(r"(\d+) requests in ([\d.]+)(\w+)", text)
    if m:
        r["requests"] = int(m.group(1))
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    if m:
        r["rps"] = float(m.group(1))
    for pct, key in (("50", "p50_ms"), ("99", "p99_ms")):
        m = re.search(rf"^\s+{pct}%\s+(\S+)", text, re.M)
        if m:
            r[key] = _ms(m.group(1))
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m:
        r["non2xx3xx"] = int(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        r["socket_errors"] = sum(int(x) for x in m.groups())
        r["socket_detail"] = "connect {}, read {}, write {}, timeout {}".format(*m.groups())
    return r


def parse_ab(text):
    r = {"requests": 0, "rps": 0.0, "p50_ms": None, "p99_ms": None,
         "non2xx3xx": 0, "socket_errors": 0}
    m = re.search(r"Complete requests:\s+(\d+)", text)
    if m:
        r["requests"] = int(m.group(1))
    m = re.search(r"Requests per second:\s+([\d.]+)", text)
    if m:
        r["rps"] = float(m.group(1))
    for pct, key in (("50", "p50_ms"), ("99", "p99_ms")):
        m = re.search(rf"^\s+{pct}%\s+(\d+)", text, re.M)
        if m:
            r[key] = float(m.group(1))
    m = re.search(r"Non-2xx responses:\s+(\d+)", text)
    if m:
        r["non2xx3xx"] = int(m.group(1))
    # Failed requests counts connect/receive/length/exception failures.
    m = re.search(r"Failed requests:\s+(\d+)", text)
    if m:
        r["socket_errors"] = int(m.group(1))
        d = re.search(r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)", text)
        if d:
            r["socket_detail"] = "connect {}, receive {}, length {}, exceptions {}".format(*d.groups())
    # ab stops early on some errors: requests asked but not completed are errors too.
    m = re.search(r"apr_\w+\(\): (.*)", text)
    if m:
        r["abort"] = m.group(0).strip()
    return r


def parse_h2load(text):
    """h2load's summary. It prints no percentiles: p50/p99 stay empty."""
    r = {"requests": 0, "rps": 0.0, "p50_ms": None, "p99_ms": None,
         "non2xx3xx": 0, "socket_errors": 0}
    m = re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", text)
    if m:
        r["rps"] = float(m.group(1))
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                  r"(\d+) failed, (\d+) errored, (\d+) timeout", text)
    if m:
        total, _, _, ok, failed, errored, timeout = (int(x) for x in m.groups())
        r["requests"] = ok
        r["socket_errors"] = failed
        if failed:
            r["socket_detail"] = f"failed {failed}, errored {errored}, timeout {timeout}"
    m = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", text)
    if m:
        r["non2xx3xx"] = int(m.group(3)) + int(m.group(4))
    m = re.search(r"time for connect:\s+(\S+)\s+(\S+)\s+(\S+)", text)
    if m:
        r["connect_mean_ms"] = _ms(m.group(3))
    m = re.search(r"^Application protocol: (\S+)", text, re.M)
    if m:
        r["protocol"] = m.group(1)
    return r


def read_time_file(path):
    """/usr/bin/time -f '%U %S %e' output (the last line: other lines are
    the command's complaints, e.g. 'Command exited with non-zero status')."""
    try:
        with open(path) as f:
            lines = [l for l in f.read().splitlines() if l.strip()]
        user, system, wall = (float(x) for x in lines[-1].split()[:3])
        return user, system, wall
    except (OSError, ValueError, IndexError):
        return None


# --- callgrind / strace ---------------------------------------------------------

def callgrind_total(path):
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise SystemExit(f"no totals in {path}")


def callgrind_objects(path, into):
    """Adds each object's own (exclusive) Ir in a callgrind.out file to `into`.

    Cost lines belong to the function named last, in the object named last;
    the line after a calls= line is the inclusive cost of a call and is
    skipped, so nothing is counted twice. Names may be compressed: "(7) name"
    in an ob= or cob= line defines id 7, a later "(7)" refers to it.
    """
    names, obj, skip_next = {}, "???", False
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith(("ob=", "cob=")):
                ref = line.split("=", 1)[1].strip()
                m = re.match(r"^\((\d+)\)\s*(.*)$", ref)
                if m and m.group(2):
                    names[m.group(1)] = m.group(2)
                if line.startswith("ob="):
                    obj = names.get(m.group(1), ref) if m else ref
            elif line.startswith("calls="):
                skip_next = True
            elif line[:1].isdigit() or line[:1] in "+-*":
                if skip_next:
                    skip_next = False
                    continue
                fields = line.split()
                if len(fields) >= 2:
                    into[obj] = into.get(obj, 0) + int(fields[1])
    return into


def strace_summary(path):
    calls, total = {}, None
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.split()
            if not parts or not re.match(r"^[\d.]+$", parts[0]):
                continue
            name = parts[-1]
            nums = [p for p in parts[:-1]]
            # % time, seconds, usecs/call, calls, [errors]
            if len(nums) < 4:
                continue
            try:
                count = int(nums[3])
            except ValueError:
                continue
            if name == "total":
                total = count
            else:
                calls[name] = count
    if total is None:
        total = sum(calls.values())
    return {"total": total, "calls": calls}


# --- idle connections -------------------------------------------------------------

def hold_connections(port, count, path, sources):
    """Opens `count` connections (source addresses round robin), sends one
    keep-alive request on each, reads each complete response (by
    Content-Length), prints 'ready OK FAILED' and holds them until stdin
    closes or a line arrives."""
    request = (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
               "User-Agent: bench-idle\r\n\r\n").encode()
    sel = selectors.DefaultSelector()
    socks, failed = [], 0
    pending = {}
    deadline = time.monotonic() + 60

    def finish_reads(block_until_below):
        nonlocal failed
        while len(pending) > block_until_below and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=1):
                s = key.fileobj
                st = pending[s]
                try:
                    data = s.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(s)
                    del pending[s]
                    failed += 1
                    continue
                st["buf"] += data
                buf = st["buf"]
                head_end = buf.find(b"\r\n\r\n")
                if head_end < 0:
                    continue
                m = re.search(rb"\r\ncontent-length:\s*(\d+)", buf[:head_end], re.I)
                length = int(m.group(1)) if m else 0
                if len(buf) >= head_end + 4 + length:
                    ok = buf.startswith((b"HTTP/1.1 200", b"HTTP/1.0 200"))
                    sel.unregister(s)
                    del pending[s]
                    if ok:
                        socks.append(s)
                    else:
                        failed += 1
                        s.close()

    for i in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.setsockopt(socket.IPPROTO_IP, 24, 1)  # IP_BIND_ADDRESS_NO_PORT
            s.bind((sources[i % len(sources)], 0))
            s.connect(("127.0.0.1", port))
            s.sendall(request)
        except OSError as e:
            failed += 1
            s.close()
            if failed == 1:
                print(f"connect failed: {e}", file=sys.stderr)
            continue
        s.setblocking(False)
        pending[s] = {"buf": b""}
        sel.register(s, selectors.EVENT_READ)
        if len(pending) >= 500:  # keep the accept queue short
            finish_reads(100)
    finish_reads(0)
    failed += len(pending)
    print(f"ready {len(socks)} {failed}", flush=True)
    try:
        sys.stdin.readline()
    except KeyboardInterrupt:
        pass
    for s in socks:
        s.close()


# --- TLS probe ----------------------------------------------------------------------

def tls_probe(port, cafile, path, kind):
    """Two `openssl s_client` connections to 127.0.0.1:PORT, each sending
    GET PATH and reading the answer (the TLS 1.3 tickets come with it): the
    first saves its session, the second offers it. Runs with the environment
    as it is (OPENSSL_CONF: the load tools' client settings). Returns what
    the first negotiated and whether the second was resumed."""
    import subprocess
    import tempfile
    request = f"GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n".encode()
    row = {"port": port}
    with tempfile.TemporaryDirectory() as tmp:
        sess = os.path.join(tmp, "session.pem")
        outs = []
        for extra in (["-sess_out", sess], ["-sess_in", sess]):
            if extra[0] == "-sess_in" and not os.path.exists(sess):
                outs.append("")
                break
            try:
                p = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{port}",
                                    "-servername", "localhost", "-CAfile", cafile, "-ign_eof"]
                                   + extra, input=request, capture_output=True, timeout=20)
                outs.append(p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace"))
            except (OSError, subprocess.TimeoutExpired) as e:
                outs.append(f"s_client failed: {e}")
    first = outs[0]

    def find(pattern, text=first):
        m = re.search(pattern, text, re.M)
        return m.group(1).strip() if m else None

    row["protocol"] = find(r"^(?:New|Reused), (TLSv[\d.]+),")
    row["cipher"] = find(r"^(?:New|Reused), TLSv[\d.]+, Cipher is (\S+)")
    row["group"] = find(r"^Server Temp Key: ([^,\n]+)")
    row["signature"] = find(r"^Peer signature type: (\S+)")
    row["verify"] = find(r"^\s*Verify return code: (.*)$")
    row["status"] = find(r"^(HTTP/1\.\d \d+)")
    second = outs[1] if len(outs) > 1 else ""
    row["resumed"] = bool(re.search(r"^Reused, TLSv", second, re.M))
    expect = {"protocol": "TLSv1.3", "cipher": "TLS_AES_128_GCM_SHA256", "group": "X25519",
              "signature": "ECDSA" if kind == "ecdsa" else "RSA-PSS"}
    bad = [f"{k} {row.get(k) or 'none'} (want {v})" for k, v in expect.items() if row.get(k) != v]
    if not (row.get("verify") or "").startswith("0 "):
        bad.append(f"certificate not verified ({row.get('verify') or 'no handshake'})")
    if not (row.get("status") or "").endswith(" 200"):
        bad.append(f"answer {row.get('status') or 'none'}")
    row["problems"] = bad
    return row


# --- report -----------------------------------------------------------------------

URL_ORDER = {"/hello": 0, "/": 1, "/index.html": 2, "/image.jpg": 3, "/files/1m.bin": 4,
             "/files/10m.bin": 5, "/asset/": 6, "/css/app.css": 7, "/data.json": 8}
LOSS_MARGIN = 0.05  # differences below this are not listed as losses
NOISY_PCT = 10  # other processes' share of a benchmark CPU that makes a cell suspect

SERVERS = ["app", "portico", "nginx", "h2o", "haproxy", "express"]
OTHERS = ["nginx", "h2o", "haproxy", "express"]
SCENARIO_TITLE = {
    "app": "app direct (Node, no server)",
    "proxy": "proxy only",
    "static": "static + proxy",
    "proxy-noka": "proxy, no upstream keep-alive",
    "tls": "TLS 1.3, ECDSA P-256",
    "tls-rsa": "TLS 1.3, RSA 2048",
    "h2": "HTTP/2 (TLS 1.3, ALPN h2)",
    "compress-1": "compression, level 1",
    "compress-6": "compression, level 6",
}
LOAD_TITLE = {"wrk10": "wrk -c10", "wrk100": "wrk -c100", "wrk1000": "wrk -c1000", "ab": "ab -c100 (new conn/req)",
              "full-hs": "ab -c50 (full handshake/req)",
              "resumed-hs": "h2load -c50 (resumed handshake/req)",
              "h2-m10": "h2load -c100 -m10", "h2-m1": "h2load -c100 -m1",
              "page": "h2load -c1 -m20 (page: 20 assets)",
              "wrk100-gzip": "wrk -c100, gzip", "wrk100-br": "wrk -c100, br",
              "wrk10-gzip": "wrk -c10, gzip", "wrk10-br": "wrk -c10, br",
              "wrk1-gzip": "wrk -c1, gzip", "wrk1-br": "wrk -c1, br"}


def load_jsonl(path):
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    rows.append(json.loads(line))
    return rows


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def aggregate(rows):
    """Cells keyed by (scenario, load, url, server) -> medians over repeats."""
    cells = {}
    for r in rows:
        key = (r["scenario"], r["load"], r["url"], r["server"])
        cells.setdefault(key, []).append(r)
    out = {}
    for key, reps in cells.items():
        nas = [r for r in reps if r.get("na")]
        failed = [r for r in reps if not r.get("na") and not r.get("requests")]
        ok = [r for r in reps if not r.get("na") and r.get("requests")]
        if not ok:
            if failed:
                out[key] = {"na": "failed: " + (failed[0].get("abort") or "no request completed")}
            else:
                out[key] = {"na": nas[0]["na"]}
            continue
        agg = {"repeats": len(ok), "failed_repeats": len(failed)}
        for field in ("rps", "p50_ms", "p99_ms", "cpu_us_per_req", "cpu_user_us_per_req",
                      "cpu_sys_us_per_req", "app_cpu_us_per_req", "vol_switches_per_req",
                      "invol_switches_per_req", "ksoftirqd1_us_per_req",
                      "cpu_with_ksoftirqd_us_per_req", "client_cpu_pct", "hwm_kb", "requests",
                      "noise_cpu0_pct", "noise_cpu1_pct"):
            agg[field] = median([r.get(field) for r in ok])
        agg["errors"] = (sum(r.get("non2xx3xx", 0) + r.get("socket_errors", 0) for r in ok)
                         + len(failed))
        agg["error_detail"] = "; ".join(sorted({r["socket_detail"] for r in ok
                                                 if r.get("socket_detail") and
                                                 r.get("socket_errors")}
                                                | {f"a repeat failed: {r.get('abort')}"
                                                   for r in failed}))
        agg["client_bound"] = sum(1 for r in ok if r.get("client_bound")) * 2 > len(ok)
        agg["noisy"] = max(agg.get("noise_cpu0_pct") or 0, agg.get("noise_cpu1_pct") or 0) > NOISY_PCT
        agg["rps_spread"] = (min(r["rps"] for r in ok), max(r["rps"] for r in ok))
        cpus = [r["cpu_us_per_req"] for r in ok if r.get("cpu_us_per_req") is not None]
        agg["cpu_spread"] = (min(cpus), max(cpus)) if cpus else None
        out[key] = agg
    return out


def fmt(value, digits=0):
    if value is None:
        return "–"
    if digits == 0:
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


def fmt_softirq_ratio(portico, others):
    """portico's CPU + ksoftirqd/1 per request over the lowest other's, or "–"."""
    key = "cpu_with_ksoftirqd_us_per_req"
    others = [(s, c) for s, c in others if c.get(key)]
    if not portico.get(key) or not others:
        return "–"
    best_s, best = min(others, key=lambda sc: sc[1][key])
    return f"{portico[key] / best[key]:.2f}× ({best_s})"


def fmt_switches(row):
    """Voluntary / involuntary context switches per request, or "–"."""
    vol, invol = row.get("vol_switches_per_req"), row.get("invol_switches_per_req")
    if vol is None or invol is None:
        return "–"
    return f"{vol:.3f} / {invol:.3f}"


def fmt_ms(value):
    if value is None:
        return "–"
    if value < 1:
        return f"{value:.2f}"
    if value < 10:
        return f"{value:.1f}"
    return f"{value:.0f}"


def wire_of(wires, scenario, load, url, server):
    """The bytes on the wire of a compress cell: (head + body as framed, the
    body's coding, whether the repeats differed), or None."""
    rows = [w for w in wires if (w.get("scenario"), w.get("load"), w.get("url"), w.get("server"))
            == (scenario, load, url, server) and not w.get("na")]
    if not rows:
        return None
    sizes = [w["head_bytes"] + w["body_wire_bytes"] for w in rows]
    # The original's length: any identity response to the URL.
    plain = {w["body_bytes"] for w in wires if w.get("url") == url and not w.get("na")
             and not w.get("content_encoding")}
    wrong = [w for w in rows if w.get("decoded_bytes") is not None and plain
             and w["decoded_bytes"] not in plain]
    return {"bytes": median(sizes), "body": median([w["body_wire_bytes"] for w in rows]),
            "coding": rows[0]["content_encoding"] or "identity",
            "varied": min(sizes) != max(sizes), "wrong": bool(wrong)}


def render_compression(cells, wires):
    """The compress scenarios side by side: per URL, coding and level, each
    server's CPU per request (median, min–max), req/s and bytes on the wire;
    then the issue's two targets, met or not."""
    L = ["## Compression", ""]
    L.append("`/css/app.css`: a 20 KB stylesheet from disk (portico: `compress = true`, so from "
             "its compressed cache after the first request; nginx `gzip on` / `brotli on` "
             "compresses it again for every response; Express: `express.static` behind "
             "`compression()`, the same). `/data.json`: the demo app's 100 KiB JSON, proxied "
             "by portico and nginx (upstream keep-alive), sent by Express itself. Level N: "
             "gzip level N and brotli quality N on every server. `wrk -t1 -c100` with "
             "`Accept-Encoding: gzip` or `br` (none for identity). **bytes**: one response as "
             "wrk asks for it, head + body as framed (chunk sizes included), read after each "
             "run; `*` = not the same in every repeat. CPU µs/req: the server's "
             "utime+stime over the requests, median and min–max of the repeats; for the "
             "proxied rows the Node app's own CPU is not in it (portico and nginx), for "
             "Express it is (the app compresses).")
    L.append("")
    servers = [s for s in ("portico", "nginx", "express")
               if any(k[3] == s and k[0].startswith("compress-") for k in cells)]
    header = ["URL", "coding", "level"]
    for s in servers:
        header += [f"{s} CPU µs/req (min–max)", f"{s} req/s", f"{s} bytes"]
    header += ["portico / nginx CPU"]
    L.append("| " + " | ".join(header) + " |")
    L.append("|" + "---|" * len(header))
    coding_of = {"wrk100": "identity", "wrk100-gzip": "gzip", "wrk100-br": "br",
                 "wrk10-gzip": "gzip, c10", "wrk10-br": "br, c10",
                 "wrk1-gzip": "gzip, c1", "wrk1-br": "br, c1"}
    keys = sorted({k[:3] for k in cells if k[0].startswith("compress-")},
                  key=lambda k: (URL_ORDER.get(k[2], 9), list(coding_of).index(k[1])
                                 if k[1] in coding_of else 9, k[0]))
    targets = []
    for scenario, load, url in keys:
        level = scenario.split("-", 1)[1]
        coding = coding_of.get(load, load)
        line = [f"`{url}`", coding, "–" if coding == "identity" else level]
        for s in servers:
            c = cells.get((scenario, load, url, s))
            if c is None:
                line += ["", "", ""]
                continue
            if "na" in c:
                line += [f"n/a ({c['na']})", "", ""]
                continue
            lo, hi = c.get("cpu_spread") or (None, None)
            mark = (("‡" if c["client_bound"] else "") + ("!" if c["errors"] else "")
                    + ("§" if c.get("noisy") else ""))
            w = wire_of(wires, scenario, load, url, s)
            line += [f"{fmt(c['cpu_us_per_req'], 1)} ({fmt(lo, 1)}–{fmt(hi, 1)})",
                     fmt(c["rps"]) + mark,
                     (fmt(w["bytes"]) + ("*" if w["varied"] else "")
                      + (" (decodes to another length!)" if w["wrong"] else "")
                      + ("" if w["coding"] == coding.split(",")[0] else f" ({w['coding']})")) if w else "–"]
        p, n = cells.get((scenario, load, url, "portico")), cells.get((scenario, load, url, "nginx"))
        if p and n and "na" not in p and "na" not in n and n.get("cpu_us_per_req"):
            ratio = p["cpu_us_per_req"] / n["cpu_us_per_req"]
            line.append(f"{ratio:.2f}×")
            if url == "/data.json" and coding != "identity":
                pw, nw = (wire_of(wires, scenario, load, url, s) for s in ("portico", "nginx"))
                bytes_note = (f"{fmt(pw['body'])} vs {fmt(nw['body'])} body bytes"
                              if pw and nw else "bytes not measured")
                targets.append(f"proxied `/data.json`, {coding} level {level}: portico "
                               f"{fmt(p['cpu_us_per_req'], 1)} µs/req vs nginx "
                               f"{fmt(n['cpu_us_per_req'], 1)} ({ratio:.2f}×, {bytes_note}): "
                               + ("**met**" if ratio <= 1.0 else "**not met**"))
        else:
            line.append("–")
        L.append("| " + " | ".join(line) + " |")
    L.append("")
    # A hot asset with compress = true: at most 1.2x the CPU of the same file uncompressed.
    plain = next((cells[k] for k in sorted(cells) if k[1] == "wrk100" and k[2] == "/css/app.css"
                  and k[3] == "portico" and k[0].startswith("compress-") and "na" not in cells[k]),
                 None)
    for scenario, load, url in keys:
        c = cells.get((scenario, load, url, "portico"))
        if url != "/css/app.css" or load == "wrk100" or not c or "na" in c or not plain:
            continue
        ratio = c["cpu_us_per_req"] / plain["cpu_us_per_req"]
        targets.append(f"hot `/css/app.css` with `compress = true`, {coding_of[load]} level "
                       f"{scenario.split('-', 1)[1]} (from the compressed cache): "
                       f"{fmt(c['cpu_us_per_req'], 1)} µs/req vs {fmt(plain['cpu_us_per_req'], 1)} "
                       f"uncompressed ({ratio:.2f}×, target ≤ 1.2×): "
                       + ("**met**" if ratio <= 1.2 else "**not met**"))
    if targets:
        L.append("Targets (issue 13):")
        L.append("")
        L += [f"- {t}" for t in targets]
        L.append("")
    return L


def render(directory, out_path, title):
    cells = aggregate(load_jsonl(os.path.join(directory, "cells.jsonl")))
    costs = load_jsonl(os.path.join(directory, "cost.jsonl"))
    mems = load_jsonl(os.path.join(directory, "memory.jsonl"))
    probes = load_jsonl(os.path.join(directory, "tls.jsonl"))
    machine = {}
    mpath = os.path.join(directory, "machine.json")
    if os.path.exists(mpath):
        with open(mpath) as f:
            machine = json.load(f)

    L = []
    L.append(f"# {title}")
    L.append("")
    if machine:
        L.append(f"- date: {machine.get('date')}")
        L.append(f"- machine: {machine.get('nproc')} CPUs, {machine.get('cpu')}, "
                 f"{machine.get('mem')}, kernel {machine.get('kernel')}, {machine.get('os')}")
        L.append(f"- versions: {machine.get('versions')}")
        L.append(f"- run: {machine.get('command')} ({machine.get('settings')}); "
                 f"took {machine.get('elapsed', '?')}")
        if machine.get("portico"):
            L.append(f"- portico binary: {machine['portico']}")
        for note in machine.get("notes", []):
            L.append(f"- note: {note}")
        L.append("")
    L.append("Each server runs one worker (nginx `worker_processes 1`, h2o `num-threads: 1`, "
             "haproxy `nbthread 1`, portico `workers = 1`) pinned with the Node app to CPU 1; "
             "the load tool runs on CPU 0. Configs: `tests/bench/conf/`. "
             "Every number is the median of the repeats. "
             "**CPU µs/req** is the server's own utime+stime (all its processes: master + "
             "worker) during the run divided by the requests completed; for \"app direct\" "
             "it is Node's. `‡` = client-bound (the load tool used ≥ 90 % of its core: the "
             "req/s is the tool's limit, the CPU µs/req still holds). `!` = errors (see the "
             f"details table). `§` = other processes on this machine took over {NOISY_PCT} % "
             "of CPU 0 or CPU 1 during the run (median): its req/s is suspect.")
    L.append("")

    measured = [c for c in cells.values() if "na" not in c]
    if measured:
        n0 = median([c.get("noise_cpu0_pct") for c in measured])
        n1 = median([c.get("noise_cpu1_pct") for c in measured])
        noisy = sum(1 for c in measured if c.get("noisy"))
        L.append(f"**Machine noise:** other processes (not the server, app or load tool) took a "
                 f"median {fmt(n0)} % of CPU 0 and {fmt(n1)} % of CPU 1 during the runs; "
                 f"{noisy} of {len(measured)} cells are marked `§`. "
                 + ("Read req/s and latency with that in mind; CPU µs/req, instructions and "
                    "system calls per request are much less affected." if noisy else ""))
        L.append("")

    # Combined results ------------------------------------------------------
    L.append("## Combined results")
    L.append("")
    servers_present = [s for s in SERVERS if s != "app" and any(k[3] == s for k in cells)]
    header = ["scenario", "load", "URL"]
    for s in servers_present:
        header += [f"{s} req/s", f"{s} p99 ms", f"{s} CPU µs/req"]
    header += ["portico vs best other: CPU", "CPU + ksoftirqd/1", "req/s"]
    L.append("| " + " | ".join(header) + " |")
    L.append("|" + "---|" * len(header))
    all_rows = sorted({k[:3] for k in cells},
                  key=lambda k: (list(SCENARIO_TITLE).index(k[0]) if k[0] in SCENARIO_TITLE else 9,
                                 list(LOAD_TITLE).index(k[1]) if k[1] in LOAD_TITLE else 9,
                                 URL_ORDER.get(k[2], 9), k[2]))
    rows = [r for r in all_rows if r[0] != "app"]
    app_rows = [r for r in all_rows if r[0] == "app"]
    detail_rows = app_rows + rows
    losses = []
    for scenario, load, url in rows:
        line = [SCENARIO_TITLE.get(scenario, scenario), LOAD_TITLE.get(load, load), f"`{url}`"]
        for s in servers_present:
            c = cells.get((scenario, load, url, s))
            if c is None and s == "haproxy" and scenario == "static":
                line += ["n/a (serves no files)", "", ""]
            elif c is None:
                line += ["", "", ""]
            elif "na" in c:
                line += [f"n/a ({c['na']})", "", ""]
            else:
                mark = (("‡" if c["client_bound"] else "") + ("!" if c["errors"] else "")
                        + ("§" if c.get("noisy") else ""))
                line += [fmt(c["rps"]) + mark, fmt_ms(c["p99_ms"]), fmt(c["cpu_us_per_req"], 1)]
        p = cells.get((scenario, load, url, "portico"))
        others = [cells.get((scenario, load, url, s)) for s in OTHERS]
        others = [(s, c) for s, c in zip(OTHERS, others) if c and "na" not in c]
        if p and "na" not in p and others and p.get("cpu_us_per_req"):
            best_cpu_s, best_cpu = min(others, key=lambda sc: sc[1]["cpu_us_per_req"] or 1e18)
            best_rps_s, best_rps = max(others, key=lambda sc: sc[1]["rps"] or 0)
            cpu_ratio = p["cpu_us_per_req"] / best_cpu["cpu_us_per_req"]
            rps_ratio = p["rps"] / best_rps["rps"] if best_rps["rps"] else None
            line += [f"{cpu_ratio:.2f}× ({best_cpu_s})", fmt_softirq_ratio(p, others),
                     f"{rps_ratio:.2f}× ({best_rps_s})" if rps_ratio else "–"]
            if cpu_ratio > 1.0 + LOSS_MARGIN:
                losses.append(f"{SCENARIO_TITLE.get(scenario)}, {LOAD_TITLE.get(load)}, `{url}`: "
                              f"portico {p['cpu_us_per_req']:.1f} µs/req vs {best_cpu_s} "
                              f"{best_cpu['cpu_us_per_req']:.1f} ({(cpu_ratio - 1) * 100:.0f} % more CPU)")
            if rps_ratio and rps_ratio < 1.0 - LOSS_MARGIN:
                losses.append(f"{SCENARIO_TITLE.get(scenario)}, {LOAD_TITLE.get(load)}, `{url}`: "
                              f"portico {p['rps']:,.0f} req/s vs {best_rps_s} "
                              f"{best_rps['rps']:,.0f} ({(1 - rps_ratio) * 100:.0f} % fewer)")
        else:
            line += ["", "", ""]
        L.append("| " + " | ".join(line) + " |")
    L.append("")
    L.append("CPU ratio: portico's CPU µs/req over the lowest of nginx/h2o/haproxy "
             "(below 1 = portico cheaper). CPU + ksoftirqd/1: the same with each server's "
             "share of ksoftirqd on its CPU added (see the details). req/s ratio: portico's req/s over the highest "
             "of the others (above 1 = portico faster).")
    L.append("")
    if app_rows:
        L.append("The app alone (no server in front), the baseline of the proxied rows:")
        L.append("")
        L.append("| load | URL | req/s | p99 ms | Node CPU µs/req |")
        L.append("|---|---|---|---|---|")
        for scenario, load, url in app_rows:
            c = cells[(scenario, load, url, "app")]
            if "na" in c:
                L.append(f"| {LOAD_TITLE.get(load, load)} | `{url}` | n/a ({c['na']}) | | |")
                continue
            mark = (("‡" if c["client_bound"] else "") + ("!" if c["errors"] else "")
                    + ("§" if c.get("noisy") else ""))
            L.append(f"| {LOAD_TITLE.get(load, load)} | `{url}` | {fmt(c['rps'])}{mark} | "
                     f"{fmt_ms(c['p99_ms'])} | {fmt(c['cpu_us_per_req'], 1)} |")
        L.append("")
    if losses:
        L.append(f"Where portico loses by more than {LOSS_MARGIN * 100:.0f} %:")
        L.append("")
        for item in losses:
            L.append(f"- {item}")
        L.append("")

    # Compression ------------------------------------------------------------------
    wires = load_jsonl(os.path.join(directory, "wire.jsonl"))
    if any(k[0].startswith("compress-") for k in cells):
        L += render_compression(cells, wires)

    # TLS --------------------------------------------------------------------------
    if probes or any(k[0] in ("tls", "tls-rsa", "h2") for k in cells):
        L.append("## TLS")
        L.append("")
        L.append("Certificates are made at the run's start with `openssl` in its temp dir (a "
                 "self-signed ECDSA P-256 CA; leaves ECDSA P-256 and RSA 2048 for `localhost`, "
                 "127.0.0.1; each server sends the leaf alone). The load tools run with "
                 "`OPENSSL_CONF` pointing at a file whose `system_default` allows only TLS 1.3, "
                 "`TLS_AES_128_GCM_SHA256` and X25519 (h2load gets the same as flags), and the "
                 "servers are set to the same where they have a setting (h2o 2.2 has none for "
                 "TLS 1.3 suites or groups: there the client's offer decides). "
                 "**full handshake**: `ab -c 50` over https, a new connection per request; ab "
                 "never offers a session, so every handshake is full. **resumed handshake**: "
                 "`h2load --h1 -c 50 -H 'Connection: close'`: each answer closes the connection "
                 "and h2load reconnects offering the ticket of its previous connection (the "
                 "first connection of each of the 50 clients is a full handshake). A TLS 1.3 "
                 "resumption (psk_dhe_ke) still does an X25519 exchange; it skips the "
                 "certificate and its signature. For these two loads **CPU µs/req is the cost "
                 "of one handshake** plus one small request and the close. The keep-alive rows "
                 "(`wrk -c100` over https) are comparable with the cleartext static + proxy "
                 "rows of the same URL.")
        L.append("")
        if any(k[0] == "h2" for k in cells):
            L.append("**HTTP/2** (scenario h2): the same TLS listener offering h2 by ALPN "
                     "(nginx 1.22 `listen ... ssl http2`, HAProxy `alpn h2,http/1.1`, h2o and "
                     "portico by default), loaded by h2load over TLS 1.3 with the settings above; "
                     "a cell whose h2load did not negotiate h2 counts as failed. "
                     "`h2load -c100 -m10` / `-m1`: 100 connections with 10 or 1 streams in "
                     "flight each, for the run's duration (`-D`); the 100 full handshakes are "
                     "in the CPU (a fraction of a µs per request). **page**: one connection "
                     "fetching 20 assets of 1–50 KB (CSS and JS from disk, 342 KiB in all, "
                     "`/asset/a01.css` … `a20.js`) in turn, 20 streams in flight "
                     "(`h2load -c1 -m20 -i LIST`), 1,000 pages at the default count. "
                     "HAProxy serves no files: only its `/hello` rows. nginx gets "
                     "`keepalive_requests 100000` in this scenario (h2load does not reconnect "
                     "after nginx's GOAWAY at 10,000 streams; portico and h2o set no such limit).")
            L.append("")
        if probes:
            L.append("What each server negotiated (`openssl s_client` with the load tools' "
                     "settings, right after each start; \"resumes\": a second connection "
                     "offering the first one's session was `Reused`):")
            L.append("")
            L.append("| scenario | server | protocol | cipher | group | signature | resumes | problems |")
            L.append("|---|---|---|---|---|---|---|---|")
            seen = {}
            for r in probes:
                key = (r.get("scenario"), r.get("server"))
                prev = seen.get(key)
                if prev is None:
                    seen[key] = dict(r, starts=1, not_resumed=0 if r.get("resumed") else 1,
                                     all_problems=list(r.get("problems") or []))
                else:
                    prev["starts"] += 1
                    prev["not_resumed"] += 0 if r.get("resumed") else 1
                    prev["all_problems"] += [p for p in r.get("problems") or []
                                             if p not in prev["all_problems"]]
            for (scenario, server), r in sorted(
                    seen.items(), key=lambda kv: (kv[0][0] or "", SERVERS.index(kv[0][1])
                                                  if kv[0][1] in SERVERS else 9)):
                resumed = ("yes" if r["not_resumed"] == 0 else
                           f"no ({r['not_resumed']} of {r['starts']} starts)")
                L.append(f"| {scenario} | {server} | {r.get('protocol') or '–'} | "
                         f"{r.get('cipher') or '–'} | {r.get('group') or '–'} | "
                         f"{r.get('signature') or '–'} | {resumed} | "
                         f"{'; '.join(r['all_problems']) or '–'} |")
            L.append("")

    # Details -----------------------------------------------------------------
    L.append("## Details per cell")
    L.append("")
    L.append("| scenario | load | URL | server | req/s (min–max) | p50 ms | p99 ms | "
             "server CPU µs/req | user / sys µs/req | switches/req vol / invol | "
             "ksoftirqd/1 µs/req | app CPU µs/req | peak RSS KiB | client CPU % | "
             "others on CPU 0 / 1 % | errors |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for scenario, load, url in detail_rows:
        for s in SERVERS:
            c = cells.get((scenario, load, url, s))
            if c is None:
                continue
            if "na" in c:
                L.append(f"| {scenario} | {load} | `{url}` | {s} | n/a: {c['na']} | | | | | | | | | | | |")
                continue
            lo, hi = c["rps_spread"]
            err = str(c["errors"]) if c["errors"] else "0"
            if c["errors"] and c["error_detail"]:
                err += f" ({c['error_detail']})"
            app_cpu = "" if s == "app" else fmt(c.get("app_cpu_us_per_req"), 1)
            L.append(f"| {scenario} | {load} | `{url}` | {s} | {fmt(c['rps'])} "
                     f"({fmt(lo)}–{fmt(hi)}) | {fmt_ms(c['p50_ms'])} | {fmt_ms(c['p99_ms'])} | "
                     f"{fmt(c['cpu_us_per_req'], 1)} | {fmt(c.get('cpu_user_us_per_req'), 1)} / "
                     f"{fmt(c.get('cpu_sys_us_per_req'), 1)} | {fmt_switches(c)} | "
                     f"{fmt(c.get('ksoftirqd1_us_per_req'), 1)} | {app_cpu} | {fmt(c['hwm_kb'])} | "
                     f"{fmt(c['client_cpu_pct'])}{' ‡' if c['client_bound'] else ''} | "
                     f"{fmt(c.get('noise_cpu0_pct'))} / {fmt(c.get('noise_cpu1_pct'))} | {err} |")
    L.append("")
    L.append("user / sys: the same CPU split into utime and stime. switches/req: the "
             "voluntary (the server slept: nothing to do) and involuntary (it was preempted) "
             "context switches of all the server's threads (/proc/PID/task/*/status), per request. "
             "ksoftirqd/1: the CPU of the kernel thread that runs deferred softirq work on the "
             "servers' CPU (loopback delivery of what they send, when the kernel moves it out of "
             "the sender's own context), per request: work the server caused that its own "
             "stime does not include. "
             "peak RSS: VmHWM summed over the server's processes, reset before each run "
             "(`/proc/PID/clear_refs` 5). app CPU: the Node app's utime+stime per request "
             "in the same run (what the proxy's way of talking to it costs the app). "
             "others on CPU 0 / 1: busy time of that CPU (/proc/stat) not used by the load tool "
             "(CPU 0) or by the server, the app and ksoftirqd (CPU 1; ksoftirqd/0 on CPU 0), "
             "in % of the run. "
             "h2o's peak RSS includes its crash-handler helper (a perl process, "
             "`annotate-backtrace-symbols`), which h2o starts beside itself.")
    L.append("")

    # Deterministic cost ----------------------------------------------------------
    if costs:
        L.append("## Deterministic cost per request")
        L.append("")
        L.append("Instructions (user space only): the server run under `valgrind "
                 "--tool=callgrind --trace-children=yes` (one worker; the worker's and master's "
                 "Ir summed) through `ab -k -c 10` after a warm-up, minus an idle run of the "
                 "same config with the same warm-up, divided by the measured requests. System "
                 "calls: `strace -f -c` attached to the server's processes and threads during "
                 "`ab -k -c 10`, divided by the requests. \"disk\" and `/hello` use the static "
                 "config; `/image.jpg` (proxied) uses the proxy-only config (100 KiB from the app). "
                 "`/files/1m.bin` and `/files/10m.bin` (static config) are measured on a tenth "
                 "and a fiftieth of the requests (they move 1 and 10 MiB each); their "
                 "`epoll_wait` and `epoll_ctl` calls per request are always listed. "
                 "\"h2\": the h2 config (HTTP/2 over TLS 1.3, ALPN h2) loaded by `h2load -c10 "
                 "-m10` instead of ab; every h2load run makes 10 full TLS handshakes, so the "
                 "instructions are a run of N+10 requests minus a run of 10 (one per connection: "
                 "the same handshakes, warm-up and probes), over N. Its system calls include the "
                 "10 handshakes' (spread over the strace run's requests). Instructions include "
                 "the TLS record encryption (user space, OpenSSL). \"TLS\": the same over "
                 "HTTP/1.1 (the tls config; ab offers no ALPN) loaded by `ab -k -c 10` over "
                 "https, the cleartext rows' load, with its 10 handshakes subtracted the same way.")
        L.append("")
        L.append("| URL | server | instructions/req | syscalls/req | main syscalls per request |")
        L.append("|---|---|---|---|---|")
        def case_of(r):
            over = {"h2": " (h2, ", "tls": " (TLS, "}.get(r.get("scenario"), " (")
            disk = r.get("scenario", "static") in ("static", "h2", "tls") and r["url"] != "/hello"
            return r["url"] + over + ("disk)" if disk else "proxied)")
        order = {"/index.html (disk)": 0, "/image.jpg (disk)": 1, "/hello (proxied)": 2,
                 "/image.jpg (proxied)": 3, "/files/1m.bin (disk)": 4,
                 "/files/10m.bin (disk)": 5, "/index.html (TLS, disk)": 6,
                 "/hello (TLS, proxied)": 7, "/index.html (h2, disk)": 8,
                 "/hello (h2, proxied)": 9}
        for r in sorted(costs, key=lambda r: (order.get(case_of(r), 99), SERVERS.index(r["server"])
                                                if r["server"] in SERVERS else 9)):
            instr = r.get("instr_per_req")
            instr_s = fmt(instr) if instr is not None else f"n/a ({r.get('instr_na', '?')})"
            sc = r.get("syscalls_per_req")
            sc_s = fmt(sc, 2) if sc is not None else f"n/a ({r.get('syscalls_na', '?')})"
            top = r.get("top_syscalls", "")
            L.append(f"| `{r['url']}` {case_of(r)[len(r['url']) + 1:]} | {r['server']} | "
                     f"{instr_s} | {sc_s} | {top} |")
        L.append("")

    # Memory -----------------------------------------------------------------------
    if mems:
        L.append("## Memory per idle keep-alive connection")
        L.append("")
        L.append("The server (static config) gets some warm-up requests, then a Python "
                 "client opens the connections (one `GET /index.html` each, responses read, "
                 "connections kept open); RSS = VmRSS summed over the server's processes.")
        L.append("")
        L.append("nginx allocates its `worker_connections` (19000) connection and event "
                 "structures at start, so part of its per-connection memory is already in "
                 "\"before\"; compare the totals too.")
        L.append("")
        L.append("| server | connections held | RSS before KiB | RSS with them KiB | KiB per connection |")
        L.append("|---|---|---|---|---|")
        for r in sorted(mems, key=lambda r: SERVERS.index(r["server"]) if r["server"] in SERVERS else 9):
            if r.get("na"):
                L.append(f"| {r['server']} | n/a: {r['na']} | | | |")
                continue
            L.append(f"| {r['server']} | {r['held']:,} (failed {r['failed']}) | {r['rss_before_kb']:,} | "
                     f"{r['rss_after_kb']:,} | {r['kib_per_conn']:.2f} |")
        L.append("")

    text = "\n".join(L) + "\n"
    with open(out_path, "w") as f:
        f.write(text)
    return text


# --- main ------------------------------------------------------------------------

def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "tree":
        print(" ".join(str(p) for p in tree(args[0])))
    elif cmd == "cpu":
        print(cpu_ticks(args))
    elif cmd == "before":
        # before SERVER_PID APP_PID: reset the peak RSS of the server's processes,
        # print "PIDS(comma) SERVER_TICKS APP_TICKS CPUSTAT SERVER_USER_TICKS SWITCHES" for `record`.
        pids = tree(args[0])
        clear_hwm(pids)
        user, system = cpu_split(pids)
        print(",".join(map(str, pids)), user + system, cpu_ticks([args[1]]), cpu_lines(), user,
              switches(pids))
    elif cmd == "foreign-listeners":
        # foreign-listeners PORT ROOT_PID: listeners on PORT outside ROOT_PID's tree
        mine = set(tree(args[1]))
        others = [p for p in listeners(int(args[0])) if p not in mine]
        for p in others:
            try:
                with open(f"/proc/{p}/cmdline") as f:
                    cmdline = f.read().replace("\0", " ").strip()
            except OSError:
                cmdline = "?"
            print(f"pid {p} ({cmdline[:80]})")
        return 1 if others else 0
    elif cmd == "cpustat":
        print(cpu_lines())
    elif cmd == "clearhwm":
        clear_hwm(args)
    elif cmd == "mem":
        print(sum(status_value(p, "VmHWM") for p in args), sum(status_value(p, "VmRSS") for p in args))
    elif cmd == "check":
        import http.client
        context = None
        if args and args[0] == "--tls":
            import ssl
            context = ssl.create_default_context(cafile=args[1])
            args = args[2:]
        port, paths, bad = int(args[0]), args[1:], []
        for path in paths:
            try:
                if context:
                    conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=10,
                                                       context=context)
                else:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                conn.request("GET", path)
                resp = conn.getresponse()
                body = resp.read()
                if resp.status != 200:
                    bad.append(f"{path}: {resp.status}")
                elif path == "/image.jpg" and len(body) != 102400:
                    bad.append(f"{path}: {len(body)} bytes")
                conn.close()
            except OSError as e:
                bad.append(f"{path}: {e}")
        if bad:
            print("; ".join(bad))
            return 1
    elif cmd == "template":
        src, dst, tags = args[0], args[1], set(args[2].split(","))
        values = dict(a.split("=", 1) for a in args[3:])
        render_template(src, dst, tags, values)
    elif cmd in ("record", "na"):
        p = argparse.ArgumentParser(prog=f"bench.py {cmd}")
        for name in ("out", "scenario", "server", "load", "url", "rep", "tool", "stdout",
                     "time", "cpu0", "cpu1", "app0", "app1", "hwm", "na", "stat0", "stat1",
                     "pids", "app-pid", "user0", "user1", "stderr", "switches0", "switches1",
                     "expect-proto"):
            p.add_argument("--" + name)
        o = p.parse_args(args)
        if o.pids:  # the "after" readings, first thing
            pids = o.pids.split(",")
            user, system = cpu_split(pids)
            o.cpu1, o.user1 = str(user + system), str(user)
            o.app1 = str(cpu_ticks([o.app_pid])) if o.app_pid else None
            o.stat1 = cpu_lines()
            o.switches1 = switches(pids)
            o.hwm = str(sum(status_value(p, "VmHWM") for p in pids))
        row = {"scenario": o.scenario, "server": o.server, "load": o.load, "url": o.url,
               "rep": int(o.rep or 0), "ts": time.time()}
        if cmd == "na":
            row["na"] = o.na
        else:
            with open(o.stdout, errors="replace") as f:
                text = f.read()
            parse = {"wrk": parse_wrk, "ab": parse_ab, "h2load": parse_h2load}[o.tool]
            row.update(parse(text))
            if o.expect_proto and row.get("protocol") != o.expect_proto:
                # e.g. ALPN chose http/1.1: the cell measured something else.
                row["abort"] = (f"negotiated {row.get('protocol') or 'nothing'}, "
                                f"not {o.expect_proto}")
                row["requests"] = 0
            n = row["requests"]
            ticks = int(o.cpu1) - int(o.cpu0)
            row["server_cpu_s"] = ticks / CLK_TCK
            row["cpu_us_per_req"] = ticks / CLK_TCK * 1e6 / n if n else None
            if o.user0 and o.user1:
                user_ticks = int(o.user1) - int(o.user0)
                row["cpu_user_us_per_req"] = user_ticks / CLK_TCK * 1e6 / n if n else None
                row["cpu_sys_us_per_req"] = ((ticks - user_ticks) / CLK_TCK * 1e6 / n
                                             if n else None)
            if o.switches0 and o.switches1 and n:
                (v0, i0), (v1, i1) = ((int(x) for x in w.split(",")) for w in (o.switches0, o.switches1))
                row["vol_switches_per_req"] = (v1 - v0) / n
                row["invol_switches_per_req"] = (i1 - i0) / n
            if o.app0 and o.app1 and o.server != "app":
                app_ticks = int(o.app1) - int(o.app0)
                row["app_cpu_us_per_req"] = app_ticks / CLK_TCK * 1e6 / n if n else None
            t = read_time_file(o.time)
            if t:
                user, system, wall = t
                row["client_cpu_pct"] = (user + system) / wall * 100 if wall else None
                row["client_bound"] = bool(wall and (user + system) / wall >= 0.9)
                row["wall_s"] = wall
            row["hwm_kb"] = int(o.hwm) if o.hwm else None
            # Other processes on the benchmark's CPUs (the machine is not ours alone):
            # CPU 1 busy minus server and app, CPU 0 busy minus the load tool.
            # ksoftirqd on the server's CPU (1) delivers what the server sent
            # when the kernel defers it out of the server's own context: work
            # the server caused that its stime does not show (large files).
            if o.stat0 and o.stat1:
                b0, t0, b1, t1, k0, k1 = (int(x) for x in (o.stat0 + ",0,0").split(",")[:6])
                b0e, t0e, b1e, t1e, k0e, k1e = (int(x) for x in (o.stat1 + ",0,0").split(",")[:6])
                softirq_ticks = k1e - k1
                if n and (k1 or k1e):
                    row["ksoftirqd1_us_per_req"] = softirq_ticks / CLK_TCK * 1e6 / n
                    row["cpu_with_ksoftirqd_us_per_req"] = (ticks + softirq_ticks) / CLK_TCK * 1e6 / n
                ours1 = (ticks + softirq_ticks
                         + ((int(o.app1) - int(o.app0)) if o.app0 and o.server != "app" else 0))
                if t1e > t1:
                    row["noise_cpu1_pct"] = max(0.0, (b1e - b1 - ours1) / (t1e - t1) * 100)
                if t0e > t0 and t:
                    client_ticks = (t[0] + t[1]) * CLK_TCK + (k0e - k0)
                    row["noise_cpu0_pct"] = max(0.0, (b0e - b0 - client_ticks) / (t0e - t0) * 100)
            if n == 0 and not row.get("abort"):
                row["abort"] = "no request completed"
                try:  # the load tool's last complaint says why (e.g. a failed handshake)
                    with open(o.stderr, errors="replace") as f:
                        lines = [l.strip() for l in f if l.strip()]
                    if lines:
                        row["abort"] += ": " + lines[-1][:150]
                except (OSError, TypeError):
                    pass
        with open(o.out, "a") as f:
            f.write(json.dumps(row) + "\n")
        if cmd == "record":
            print(f"{row['rps']:>10,.0f} req/s  p99 {fmt_ms(row['p99_ms']):>6} ms  "
                  f"server {fmt(row['cpu_us_per_req'], 1):>6} µs/req "
                  f"({fmt(row.get('cpu_user_us_per_req'), 1)} user + "
                  f"{fmt(row.get('cpu_sys_us_per_req'), 1)} sys, switches {fmt_switches(row)}, "
                  f"ksoftirqd/1 {fmt(row.get('ksoftirqd1_us_per_req'), 1)})  "
                  f"client {fmt(row.get('client_cpu_pct'))}%  "
                  f"others cpu0/1 {fmt(row.get('noise_cpu0_pct'))}/{fmt(row.get('noise_cpu1_pct'))}%  "
                  f"errors {row['non2xx3xx'] + row['socket_errors']}"
                  + (f"  [{row['abort']}]" if row.get("abort") else ""))
    elif cmd == "tls-probe":
        # tls-probe PORT CAFILE PATH KIND --out FILE [K=V...]: one JSON line (with the
        # K=V fields) appended to FILE and printed; exit 1 when the handshake is not
        # the expected one (resumption is reported, not required).
        port, cafile, path, kind = args[:4]
        out, extra = None, {}
        rest = args[4:]
        while rest:
            if rest[0] == "--out":
                out, rest = rest[1], rest[2:]
            else:
                k, v = rest[0].split("=", 1)
                extra[k] = v
                rest = rest[1:]
        row = dict(extra, **tls_probe(int(port), cafile, path, kind), ts=time.time())
        if out:
            with open(out, "a") as f:
                f.write(json.dumps(row) + "\n")
        print(json.dumps(row))
        return 1 if row["problems"] else 0
    elif cmd == "tls-line":
        # tls-line [--problems|--resumed] JSON: a tls-probe row as one line for
        # the console, its problems, or exit 0 when it resumed.
        mode = args[0] if args[0].startswith("--") else ""
        try:
            r = json.loads(args[-1].strip().splitlines()[-1])
        except (ValueError, IndexError):
            print(args[-1].strip()[-150:] or "tls-probe printed nothing")
            return 1
        if mode == "--problems":
            print("; ".join(r.get("problems") or []))
        elif mode == "--resumed":
            return 0 if r.get("resumed") else 1
        else:
            print(f"  {r.get('scenario', ''):<10} {r.get('server', ''):<8} TLS probe: "
                  f"{r.get('protocol')} {r.get('cipher')} {r.get('group')} {r.get('signature')}"
                  + (", resumes" if r.get("resumed") else ", DOES NOT RESUME")
                  + (f"  [{'; '.join(r['problems'])}]" if r.get("problems") else ""))
    elif cmd == "callgrind-total":
        print(sum(callgrind_total(a) for a in args))
    elif cmd == "callgrind-objects":
        objects = {}
        for a in args:
            callgrind_objects(a, objects)
        print(json.dumps(objects))
    elif cmd == "strace-summary":
        print(json.dumps(strace_summary(args[0])))
    elif cmd == "cost-row":
        # cost-row OUT SERVER URL N INSTR_LOADED INSTR_IDLE STRACE_FILE STRACE_N [instr_na] [strace_na]
        out, server, url = args[0], args[1], args[2]
        n, loaded, idle, sfile, sn = args[3], args[4], args[5], args[6], args[7]
        instr_na = args[8] if len(args) > 8 else ""
        strace_na = args[9] if len(args) > 9 else ""
        scenario = args[10] if len(args) > 10 else "static"
        row = {"server": server, "url": url, "scenario": scenario}
        if loaded and idle and not instr_na:
            row["instr_per_req"] = (int(loaded) - int(idle)) / int(n)
            row["instr_loaded"], row["instr_idle"] = int(loaded), int(idle)
        else:
            row["instr_na"] = instr_na or "no callgrind output"
        if sfile and os.path.exists(sfile) and not strace_na:
            s = strace_summary(sfile)
            requests = int(sn)
            row["syscalls_per_req"] = s["total"] / requests
            top = sorted(s["calls"].items(), key=lambda kv: -kv[1])[:6]
            # The loop's own calls always show (0 too): how often it waits
            # and re-arms is what the large files' cells are about.
            for name in ("epoll_wait", "epoll_pwait", "epoll_ctl"):
                if name in s["calls"] and all(k != name for k, _ in top):
                    top.append((name, s["calls"][name]))
            if not any(k in s["calls"] for k in ("epoll_wait", "epoll_pwait")):
                top.append(("epoll_wait", 0))
            if "epoll_ctl" not in s["calls"]:
                top.append(("epoll_ctl", 0))
            row["top_syscalls"] = ", ".join(f"{k} {v / requests:.2f}" for k, v in top
                                            if v / requests >= 0.01 or k.startswith("epoll"))
        else:
            row["syscalls_na"] = strace_na or "no strace output"
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row))
    elif cmd == "mem-row":
        out, server, held, failed, before, after = args[:6]
        row = {"server": server, "held": int(held), "failed": int(failed),
               "rss_before_kb": int(before), "rss_after_kb": int(after)}
        row["kib_per_conn"] = (int(after) - int(before)) / int(held) if int(held) else 0.0
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps(row))
    elif cmd == "mem-na":
        with open(args[0], "a") as f:
            f.write(json.dumps({"server": args[1], "na": args[2]}) + "\n")
    elif cmd == "conns":
        port, count, path = int(args[0]), int(args[1]), args[2]
        sources = args[3].split(",") if len(args) > 3 else ["127.0.0.1"]
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        hold_connections(port, count, path, sources)
    elif cmd == "css":
        write_css(args[0], int(args[1]))
    elif cmd == "wire":
        # wire --out FILE PORT PATH ACCEPT [K=V...]: one JSON line (with the K=V fields)
        out, rest = None, list(args)
        if rest and rest[0] == "--out":
            out, rest = rest[1], rest[2:]
        port, path, accept = int(rest[0]), rest[1], rest[2]
        extra = dict(a.split("=", 1) for a in rest[3:])
        try:
            row = dict(extra, accept=accept, url=path, **wire_bytes(port, path, accept))
        except (OSError, ValueError, zlib.error) as e:
            row = dict(extra, accept=accept, url=path, na=str(e))
        if out:
            with open(out, "a") as f:
                f.write(json.dumps(row) + "\n")
        print(json.dumps(row))
        return 1 if row.get("na") else 0
    elif cmd == "render":
        p = argparse.ArgumentParser(prog="bench.py render")
        p.add_argument("--dir", required=True)
        p.add_argument("--out", required=True)
        p.add_argument("--title", default="portico benchmark")
        o = p.parse_args(args)
        sys.stdout.write(render(o.dir, o.out, o.title))
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
