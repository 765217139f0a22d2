#!/usr/bin/env python3
"""Two servers measured at the same time, on the harness's configs.

    tests/bench/side_by_side.py [options] A B
      A, B        portico | portico=PATH | nginx | h2o | haproxy | varnish, where PATH is
                  another portico binary, or a config template (ending in .toml, .conf,
                  .cfg or .vcl) in place of the harness's own for that server
                  (nginx=my-nginx.conf)
      --scenario  static, proxy, proxy-noka, compress-1, compress-6 (default static), or
                  proxy-tls: proxy with the upstream over TLS (portico and nginx only; each
                  proxy has its own tests/bench/https_app.js, which counts its handshakes),
                  or cache: the response cache in front of the demo app, which sends
                  Cache-Control: public, max-age=3600 (portico, nginx with proxy_cache on a
                  tmpfs, varnish with -s malloc; conf/*-cache.*): every response measured is
                  a hit, and the app's CPU in the rounds is printed to show it
      --url       the URL loaded (default /index.html)
      --url-b     B's URL when it differs from A's (a cache hit of / against the same
                  bytes as a static /index.html, both portico)
      --load      wrkN (wrk -t1 -cN -d SECONDS, keep-alive) or abN (ab -c N -n REQUESTS,
                  a new connection per request); default wrk100
      --encoding  an Accept-Encoding for the load (gzip, br)
      --rounds    rounds (default 5); --seconds wrk's duration (10); --requests ab's -n (20000)
      --apart     load one server at a time (order alternating by round), the other idle,
                  and add the whole machine's busy CPU per response (/proc/stat, both CPUs)

Why: run.sh measures one server after the other, and a shared VM's speed
drifts between two cells by more than the few % that separate close
servers (or two builds of portico). Here A and B run at once on CPU 1
beside one Node app, each under its own load tool on CPU 0, started
together; each server's utime+stime (master and workers, from /proc) over
its own responses gives its CPU per response, and the drift hits both
alike. Prints each round's figures and ratio A/B, then the median, min
and max, the machine, and the bytes of one response from each (as sent).

Each load tool's own CPU per response is printed too ("client"), and a
second ratio with it added: on loopback the kernel runs part of the
receiver's work in the sender's context and part of the sender's (a
transmission that an ACK opens) in the receiver's, so a change that only
moves such work between server and client shows in the first ratio and
not in the second. --apart reads the machine's total instead, for cells
where the load tool is saturated (its CPU per response is then only the
inverse of its rate) and for softirq work that no process is charged with.

Each round line shows the responses each server answered and the errors
its load tool counted (non-2xx answers, socket errors); rounds with errors
are listed at the end, and so are uneven rounds (one server answered over
1.25x the other's responses): in a proxied cell where the one Node app is
the limit, the app serves the server with more upstream connections more
often (at wrk -c1000 nginx opens up to 1000, portico's pool holds 64), and
the busier server does more per wakeup. Measure such cells with --apart.

varnish (cache scenario): varnishd -F (the manager in the foreground; it
forks the cache process, whose CPU is counted with the manager's as a
child's) with -s malloc,256m, -p thread_pools=1 (one pool: "one worker or
thread pool each"; its threads, 100 to 5000 by default, all on CPU 1 like
the others' one worker), -T none, and its working folder in the run's temp
dir. Varnish runs a thread per busy connection, so in the cache scenario
the warm-up also runs the cell's own load for 3 s: the pool grows to the
connection count before the rounds, not during them.

Ports: A on 18181, B on 18182, the app on 13300: run it when no run.sh is
running. Files and logs go to a temp dir that is removed at the end.
"""
import argparse
import http.client
import json
import os
import platform
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "lib"))
import bench  # noqa: E402  (the harness's config templates and assets)

PORTS, APP_PORT = (18181, 18182), 13300
TLS_APP_PORTS = (13301, 13302)  # proxy-tls: A's and B's own HTTPS upstream
SERVER_CPU, CLIENT_CPU = "1", "0"
NGINX_BROTLI = "/usr/lib/nginx/modules/ngx_http_brotli_filter_module.so"


def config_and_tags(scenario):
    """The portico template and the set of tags of a scenario, as run.sh's tags_of."""
    if scenario.startswith("compress-"):
        return "compress", {"compress", "keepalive", "cleartext"} | (
            {"brotli"} if os.path.exists(NGINX_BROTLI) else set())
    if scenario == "proxy-tls":
        return scenario, {"proxy", "keepalive", "cleartext"}
    if scenario == "cache":
        return scenario, {"proxy", "keepalive", "cleartext", "cache"}
    return scenario, {"static": {"static", "keepalive"}, "proxy": {"proxy", "keepalive"},
                      "proxy-noka": {"proxy", "nokeepalive"}}[scenario] | {"cleartext"}


def server_cpu(pid):
    """(utime, stime) in seconds of a process and its descendants (a master and its workers)."""
    user, system = bench.cpu_split(bench.tree(pid))
    return user / bench.CLK_TCK, system / bench.CLK_TCK


def response_bytes(port, url, encoding):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", url, headers={"Accept-Encoding": encoding} if encoding else {})
    response = connection.getresponse()
    size = len(response.read())  # de-chunked, as encoded
    connection.close()
    return response.status, size


def response_head(port, url):
    """The head of one GET of URL as wrk sends it, its lines joined by " | "."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"GET {url} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    sock.close()
    return " | ".join(data.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n"))


def app_page(port):
    """The demo app's / as it sends it: the bytes of the static /index.html of the
    cache scenario (portico's own static answer of the same page)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/")
    body = connection.getresponse().read()
    connection.close()
    return body


def make_upstream_certificate(run):
    """proxy-tls: a CA and an ECDSA P-256 leaf for app.test signed by it, as
    upstream_tls_cost.sh makes them: RUN/ca.pem, RUN/app.pem, RUN/app.key."""
    for command in (
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=bench-ca", "-days", "2",
             "-addext", "basicConstraints=critical,CA:TRUE"],
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", "app.key", "-out", "app.pem", "-subj", "/CN=app.test", "-days", "2",
             "-CA", "ca.pem", "-CAkey", "ca.key", "-addext", "subjectAltName=DNS:app.test"]):
        subprocess.run(command, cwd=run, capture_output=True, check=True)


def upstream_handshakes(port, ca):
    """proxy-tls: what an https_app.js counted: {"full", "resumed", "requests"}."""
    context = ssl.create_default_context(cafile=ca)
    context.check_hostname = False  # the leaf names app.test, reached here as 127.0.0.1
    connection = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=context)
    connection.request("GET", "/_handshakes")
    counts = json.loads(connection.getresponse().read())
    connection.close()
    return counts


def wait_for_port(port, seconds=15):
    """Until something accepts on 127.0.0.1:PORT (a Node app starts slowly on a busy machine)."""
    end = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.1)


def machine_busy_seconds():
    """Busy time of the whole machine (every CPU), from /proc/stat's first line: user,
    nice, system, irq, softirq; not steal, which is other guests' time on a shared host."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]  # user nice system idle iowait irq softirq steal
    return (v[0] + v[1] + v[2] + v[5] + v[6]) / bench.CLK_TCK


def machine():
    with open("/proc/cpuinfo") as f:
        model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    return f"{os.cpu_count()} CPUs, {model}, kernel {platform.release()}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("servers", nargs=2, metavar="SERVER")
    parser.add_argument("--scenario", default="static")
    parser.add_argument("--url", default="/index.html")
    parser.add_argument("--url-b", default="")
    parser.add_argument("--load", default="wrk100")
    parser.add_argument("--encoding", default="")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--apart", action="store_true")
    o = parser.parse_args()
    tool, connections = re.fullmatch(r"(wrk|ab)(\d+)", o.load).groups()
    urls = (o.url, o.url_b or o.url)
    base, tags = config_and_tags(o.scenario)
    level = o.scenario.split("-")[1] if o.scenario.startswith("compress-") else "6"

    if base == "proxy-tls" and any(spec.partition("=")[0] not in ("portico", "nginx") for spec in o.servers):
        sys.exit("proxy-tls: portico and nginx only (no h2o or haproxy template for a TLS upstream)")
    if base == "cache" and any(spec.partition("=")[0] not in ("portico", "nginx", "varnish") for spec in o.servers):
        sys.exit("cache: portico, nginx and varnish only")
    if base != "cache" and any(spec.partition("=")[0] == "varnish" for spec in o.servers):
        sys.exit("varnish: in the cache scenario only")

    run = tempfile.mkdtemp(prefix="portico-side-by-side-")
    os.chmod(run, 0o755)  # varnishd's cache process (user vcache) reaches its folder in it
    # nginx's cache folder, memory-backed (the cache scenario): on the tmpfs.
    shm = tempfile.mkdtemp(prefix="portico-side-by-side-", dir="/dev/shm")
    assets = os.path.join(run, "assets")
    os.makedirs(os.path.join(assets, "files"))
    os.makedirs(os.path.join(assets, "css"))
    if o.url.startswith("/files/"):
        for name, size in (("1m.bin", 1 << 20), ("10m.bin", 10 << 20)):
            with open(os.path.join(assets, "files", name), "wb") as f:
                f.write(os.urandom(size))
    if base == "compress":
        bench.write_css(os.path.join(assets, "css", "app.css"), 20000)
    log = open(os.path.join(run, "servers.log"), "a")
    started = []

    def start(command, env=None):
        process = subprocess.Popen(["taskset", "-c", SERVER_CPU] + command, stdout=log, stderr=subprocess.STDOUT,
                                   env=dict(os.environ, **(env or {})))
        started.append(process)
        return process

    def start_server(spec, port, slot):
        name, _, path = spec.partition("=")
        own = os.path.join(run, f"server-{slot}")
        for d in ("nginx-body", "nginx-proxy", "nginx-fastcgi", "nginx-uwsgi", "nginx-scgi"):
            os.makedirs(os.path.join(own, d))
        values = dict(PORT=str(port), APP_PORT=str(APP_PORT), WWW=os.path.join(ROOT, "www"), RUN=own,
                      ASSETS=assets, LEVEL=level, TLS_PORT="0", CERT="", KEY="", CERTKEY="",
                      UPSTREAM_TLS_PORT=str(TLS_APP_PORTS[slot]), UPSTREAM_CA=os.path.join(run, "ca.pem"),
                      CACHE_DIR=os.path.join(shm, f"nginx-cache-{slot}"))
        template = {"portico": f"portico-{base}.toml",
                    "nginx": {"proxy-tls": "nginx-proxy-tls.conf", "cache": "nginx-cache.conf"}.get(
                        base, "nginx.conf"),
                    "h2o": "h2o.conf", "haproxy": "haproxy.cfg", "varnish": "varnish-cache.vcl"}[name]
        conf = os.path.join(own, template)
        own_template = path.endswith((".toml", ".conf", ".cfg", ".vcl"))
        bench.render_template(path if own_template else os.path.join(HERE, "conf", template), conf, tags, values)
        binary = path if path and not own_template else os.environ.get(
            "PORTICO_BIN", os.path.join(ROOT, "build", "portico"))
        return start({"portico": [binary, "-c", conf],
                      "nginx": ["nginx", "-p", own + "/", "-c", conf, "-g", "daemon off;"],
                      "h2o": ["h2o", "-c", conf],
                      "haproxy": ["haproxy", "-f", conf, "-db"],
                      "varnish": ["varnishd", "-F", "-n", os.path.join(own, "varnish"),
                                  "-a", f"127.0.0.1:{port}", "-f", conf, "-T", "none",
                                  "-s", "malloc,256m", "-p", "thread_pools=1"]}[name])

    def load(port, path, seconds=None):
        url = f"http://127.0.0.1:{port}{path}"
        header = ["-H", f"Accept-Encoding: {o.encoding}"] if o.encoding else []
        command = (["wrk", "-t1", f"-c{connections}", f"-d{seconds or o.seconds}s"] + header + [url] if tool == "wrk"
                   else ["ab", "-r", "-s", "10", "-n", str(o.requests), "-c", connections] + header + [url])
        return subprocess.Popen(["taskset", "-c", CLIENT_CPU] + command, stdout=subprocess.PIPE, text=True)

    def completed(tool_run, slot):
        """(the load tool's figures, its own utime+stime in seconds) of a finished load:
        bench.parse_wrk/parse_ab's requests, rps, non2xx3xx and socket_errors (ab: failed
        requests). A round with errors compares unlike work (a quick 502 against a served
        response), so it is marked."""
        output = tool_run.stdout.read()
        _, status, usage = os.wait4(tool_run.pid, 0)
        tool_run.returncode = os.waitstatus_to_exitcode(status)
        figures = bench.parse_wrk(output) if tool == "wrk" else bench.parse_ab(output)
        if tool_run.returncode != 0 or figures["requests"] == 0:
            sys.exit(f"{tool} against {'AB'[slot]} ({o.servers[slot]}) exited {tool_run.returncode} with "
                     f"{figures['requests']} responses:\n{output}\n(logs: {run}/servers.log)")
        return figures, usage.ru_utime + usage.ru_stime

    upstream_ca = os.path.join(run, "ca.pem")
    try:
        app = start(["node", os.path.join(ROOT, "deploy", "demo-app", "server.js")],
                    {"PORT": str(APP_PORT), **({"CACHE_CONTROL": "public, max-age=3600"} if base == "cache" else {})})
        if base == "cache":
            wait_for_port(APP_PORT)
            with open(os.path.join(assets, "index.html"), "wb") as f:
                f.write(app_page(APP_PORT))
        if base == "proxy-tls":
            make_upstream_certificate(run)
            for port in TLS_APP_PORTS:
                start(["node", os.path.join(HERE, "https_app.js")],
                      {"PORT": str(port), "CERT": os.path.join(run, "app.pem"), "KEY": os.path.join(run, "app.key")})
            for port in TLS_APP_PORTS:
                wait_for_port(port)
        servers = [start_server(spec, port, slot) for slot, (spec, port) in enumerate(zip(o.servers, PORTS))]
        time.sleep(2)
        sizes = [response_bytes(port, url, o.encoding) for port, url in zip(PORTS, urls)]
        if any(status != 200 for status, _ in sizes):
            sys.exit(f"not both 200: {sizes} (logs: {run}/servers.log)")
        for port, url in zip(PORTS, urls):  # warm: pools, caches, encoder memory, the app's JIT
            subprocess.run(["ab", "-k", "-n", "2000", "-c", "20"] +
                           (["-H", f"Accept-Encoding: {o.encoding}"] if o.encoding else []) +
                           [f"http://127.0.0.1:{port}{url}"], capture_output=True, check=True)
            if base == "cache" and tool == "wrk":  # Varnish's pool grows to the connection count
                completed(load(port, url, 3), PORTS.index(port))
        url_text = o.url if urls[0] == urls[1] else f"A {urls[0]}, B {urls[1]}"
        print(f"{machine()}; {o.scenario} {url_text} {o.load}{' ' + o.encoding if o.encoding else ''}: "
              f"A = {o.servers[0]}, B = {o.servers[1]}", flush=True)
        if base == "cache":
            for label, port, url in zip("AB", PORTS, urls):
                print(f"{label}'s head: {response_head(port, url)}", flush=True)
            app_before = server_cpu(app.pid)
        with open("/proc/loadavg") as f:
            print(f"load average before the rounds: {' '.join(f.read().split()[:3])}", flush=True)
        if base == "proxy-tls":
            warm = [upstream_handshakes(port, upstream_ca) for port in TLS_APP_PORTS]
        ratios, with_client, whole, rounds_with_errors, uneven_rounds = [], [], [], [], []
        for number in range(1, o.rounds + 1):
            cost, client_cost, machine_cost, done, errors, rate = ([None] * 2 for _ in range(6))
            # Together: both loads at once. Apart: one at a time, A first in odd rounds.
            groups = [(0, 1)] if not o.apart else [(0,), (1,)] if number % 2 else [(1,), (0,)]
            for group in groups:
                before = {i: server_cpu(servers[i].pid) for i in group}
                busy_before = machine_busy_seconds()
                loads = {i: load(PORTS[i], urls[i]) for i in group}
                for i in group:
                    figures, client = completed(loads[i], i)
                    done[i], rate[i] = figures["requests"], figures["rps"]
                    errors[i] = figures["non2xx3xx"] + figures["socket_errors"]
                    client_cost[i] = client / done[i] * 1e6
                busy = machine_busy_seconds() - busy_before
                for i in group:
                    after = server_cpu(servers[i].pid)
                    cost[i] = [(after[k] - before[i][k]) / done[i] * 1e6 for k in (0, 1)]
                    machine_cost[i] = busy / done[i] * 1e6
            ratios.append(sum(cost[0]) / sum(cost[1]))
            with_client.append((sum(cost[0]) + client_cost[0]) / (sum(cost[1]) + client_cost[1]))
            if o.apart:
                whole.append(machine_cost[0] / machine_cost[1])
            if any(errors):
                rounds_with_errors.append(number)
            if not o.apart and max(rate) > 1.25 * min(rate):
                uneven_rounds.append(number)
            print(f"round {number}: " + ", ".join(
                f"{label} {sum(c):,.1f} µs/response ({c[0]:,.1f} user + {c[1]:,.1f} sys, {n} responses"
                + (f", {e} ERRORS" if e else "") + f"; client {cc:,.1f}"
                + (f"; machine {mc:,.1f})" if o.apart else ")")
                for label, c, n, e, cc, mc in zip("AB", cost, done, errors, client_cost, machine_cost)) +
                f", A/B {ratios[-1]:.3f}, with clients {with_client[-1]:.3f}" +
                (f", machine {whole[-1]:.3f}" if o.apart else ""), flush=True)
        print(f"response bytes: A {sizes[0][1]:,}, B {sizes[1][1]:,}")
        if base == "cache":
            app_after = server_cpu(app.pid)
            # Every answer a hit: the app had nothing to do (Node's own timers aside).
            print(f"the app's CPU in the rounds: {sum(app_after) - sum(app_before):.2f} s")
        with open("/proc/loadavg") as f:
            print(f"load average after the rounds: {' '.join(f.read().split()[:3])}")
        if base == "proxy-tls":
            for label, port, before in zip("AB", TLS_APP_PORTS, warm):
                after = upstream_handshakes(port, upstream_ca)
                # Each reading is a new connection of ours, a full handshake the app
                # counts: one in the rounds' difference, two in all.
                after["full"] -= 2
                before["full"] -= 1
                shakes = {k: after[k] - before[k] for k in ("full", "resumed", "requests")}
                print(f"upstream TLS handshakes, {label}: in the rounds {shakes['full']} full + "
                      f"{shakes['resumed']} resumed for {shakes['requests']:,} requests "
                      f"({(shakes['full'] + shakes['resumed']) / max(1, shakes['requests']):.6f} per request); "
                      f"in all, warm-up included, {after['full']} full + {after['resumed']} resumed "
                      f"for {after['requests']:,}")
        summaries = [("CPU per response", ratios), ("CPU per response, server + its load tool", with_client)]
        if o.apart:
            summaries.append(("the machine's busy CPU per response, one server loaded at a time", whole))
        for title, values in summaries:
            print(f"A/B {title}: median {bench.median(values):.3f} "
                  f"(min {min(values):.3f}, max {max(values):.3f}), {o.rounds} rounds")
        if rounds_with_errors:
            print(f"ERRORS in rounds {', '.join(map(str, rounds_with_errors))}: the load tool counted "
                  f"failed or non-2xx answers there, so those rounds compare unlike work "
                  f"(logs: the servers' own, above)")
        if uneven_rounds:
            print(f"UNEVEN in rounds {', '.join(map(str, uneven_rounds))}: one server answered over "
                  f"1.25x the other's responses per second. Where the shared app is the limit, it serves the "
                  f"server with more upstream connections more often, and a busier server does more "
                  f"per wakeup: the ratio then says as much about the share as about the servers "
                  f"(measure such a cell one server at a time: --apart, or run.sh)")
    finally:
        for process in started:
            process.send_signal(signal.SIGTERM)
        for process in started:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(run, ignore_errors=True)
        shutil.rmtree(shm, ignore_errors=True)


if __name__ == "__main__":
    main()
