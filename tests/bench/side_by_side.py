#!/usr/bin/env python3
"""Two servers measured at the same time, on the harness's configs.

    tests/bench/side_by_side.py [options] A B
      A, B        portico | portico=PATH (another binary) | nginx | h2o | haproxy
      --scenario  static, proxy, proxy-noka, compress-1, compress-6 (default static)
      --url       the URL loaded (default /index.html)
      --load      wrkN (wrk -t1 -cN -d SECONDS, keep-alive) or abN (ab -c N -n REQUESTS,
                  a new connection per request); default wrk100
      --encoding  an Accept-Encoding for the load (gzip, br)
      --rounds    rounds (default 5); --seconds wrk's duration (10); --requests ab's -n (20000)

Why: run.sh measures one server after the other, and a shared VM's speed
drifts between two cells by more than the few % that separate close
servers (or two builds of portico). Here A and B run at once on CPU 1
beside one Node app, each under its own load tool on CPU 0, started
together; each server's utime+stime (master and workers, from /proc) over
its own responses gives its CPU per response, and the drift hits both
alike. Prints each round's figures and ratio A/B, then the median, min
and max, the machine, and the bytes of one response from each (as sent).

Ports: A on 18181, B on 18182, the app on 13300: run it when no run.sh is
running. Files and logs go to a temp dir that is removed at the end.
"""
import argparse
import http.client
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "lib"))
import bench  # noqa: E402  (the harness's config templates and assets)

PORTS, APP_PORT = (18181, 18182), 13300
SERVER_CPU, CLIENT_CPU = "1", "0"
NGINX_BROTLI = "/usr/lib/nginx/modules/ngx_http_brotli_filter_module.so"


def config_and_tags(scenario):
    """The portico template and the tags of a scenario, as run.sh's tags_of."""
    if scenario.startswith("compress-"):
        return "compress", "compress,keepalive,cleartext" + (",brotli" if os.path.exists(NGINX_BROTLI) else "")
    return scenario, {"static": "static,keepalive", "proxy": "proxy,keepalive",
                      "proxy-noka": "proxy,nokeepalive"}[scenario] + ",cleartext"


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


def machine():
    with open("/proc/cpuinfo") as f:
        model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    return f"{os.cpu_count()} CPUs, {model}, kernel {platform.release()}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("servers", nargs=2, metavar="SERVER")
    parser.add_argument("--scenario", default="static")
    parser.add_argument("--url", default="/index.html")
    parser.add_argument("--load", default="wrk100")
    parser.add_argument("--encoding", default="")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--requests", type=int, default=20000)
    o = parser.parse_args()
    tool, connections = re.fullmatch(r"(wrk|ab)(\d+)", o.load).groups()
    base, tags = config_and_tags(o.scenario)
    level = o.scenario.split("-")[1] if o.scenario.startswith("compress-") else "6"

    run = tempfile.mkdtemp(prefix="portico-side-by-side-")
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
                      ASSETS=assets, LEVEL=level, TLS_PORT="0", CERT="", KEY="", CERTKEY="")
        template = {"portico": f"portico-{base}.toml", "nginx": "nginx.conf", "h2o": "h2o.conf",
                    "haproxy": "haproxy.cfg"}[name]
        conf = os.path.join(own, template)
        bench.render_template(os.path.join(HERE, "conf", template), conf, tags, values)
        return start({"portico": [path or os.path.join(ROOT, "build", "portico"), "-c", conf],
                      "nginx": ["nginx", "-p", own + "/", "-c", conf, "-g", "daemon off;"],
                      "h2o": ["h2o", "-c", conf],
                      "haproxy": ["haproxy", "-f", conf, "-db"]}[name])

    def load(port):
        url = f"http://127.0.0.1:{port}{o.url}"
        header = ["-H", f"Accept-Encoding: {o.encoding}"] if o.encoding else []
        command = (["wrk", "-t1", f"-c{connections}", f"-d{o.seconds}s"] + header + [url] if tool == "wrk"
                   else ["ab", "-r", "-s", "10", "-n", str(o.requests), "-c", connections] + header + [url])
        return subprocess.Popen(["taskset", "-c", CLIENT_CPU] + command, stdout=subprocess.PIPE, text=True)

    def completed(output):
        pattern = r"(\d+) requests in" if tool == "wrk" else r"Complete requests:\s+(\d+)"
        return int(re.search(pattern, output).group(1))

    try:
        start(["node", os.path.join(ROOT, "deploy", "demo-app", "server.js")], {"PORT": str(APP_PORT)})
        servers = [start_server(spec, port, slot) for slot, (spec, port) in enumerate(zip(o.servers, PORTS))]
        time.sleep(2)
        sizes = [response_bytes(port, o.url, o.encoding) for port in PORTS]
        if any(status != 200 for status, _ in sizes):
            sys.exit(f"not both 200: {sizes} (logs: {run}/servers.log)")
        for port in PORTS:  # warm: pools, caches, encoder memory, the app's JIT
            subprocess.run(["ab", "-k", "-n", "2000", "-c", "20"] +
                           (["-H", f"Accept-Encoding: {o.encoding}"] if o.encoding else []) +
                           [f"http://127.0.0.1:{port}{o.url}"], capture_output=True, check=True)
        print(f"{machine()}; {o.scenario} {o.url} {o.load}{' ' + o.encoding if o.encoding else ''}: "
              f"A = {o.servers[0]}, B = {o.servers[1]}", flush=True)
        ratios = []
        for number in range(1, o.rounds + 1):
            before = [server_cpu(server.pid) for server in servers]
            loads = [load(port) for port in PORTS]
            done = [completed(tool_run.communicate()[0]) for tool_run in loads]
            after = [server_cpu(server.pid) for server in servers]
            cost = [[(after[i][k] - before[i][k]) / done[i] * 1e6 for k in (0, 1)] for i in (0, 1)]
            ratios.append(sum(cost[0]) / sum(cost[1]))
            print(f"round {number}: " + ", ".join(
                f"{label} {sum(c):,.1f} µs/response ({c[0]:,.1f} user + {c[1]:,.1f} sys, {n} responses)"
                for label, c, n in zip("AB", cost, done)) + f", A/B {ratios[-1]:.3f}", flush=True)
        print(f"response bytes: A {sizes[0][1]:,}, B {sizes[1][1]:,}")
        print(f"A/B CPU per response: median {bench.median(ratios):.3f} "
              f"(min {min(ratios):.3f}, max {max(ratios):.3f}), {o.rounds} rounds")
    finally:
        for process in started:
            process.send_signal(signal.SIGTERM)
        for process in started:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(run, ignore_errors=True)


if __name__ == "__main__":
    main()
