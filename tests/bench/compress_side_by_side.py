#!/usr/bin/env python3
"""portico and nginx compressing the demo app's 100 KiB JSON at the same time.

    tests/bench/compress_side_by_side.py [LEVEL] [CODING] [CONNECTIONS] [ROUNDS]
    (defaults: 6 br 100 5; PORTICO_BIN: another portico binary)

Why: run.sh measures one server after the other, and a shared VM's speed
drifts between two cells by more than the few % that separate portico's
compression from nginx's (the same libraries). Here both servers run at
once on CPU 1 beside one Node app, each under its own `wrk -t1 -cN` on
CPU 0 for the same 10 s; each server's utime+stime (master and workers,
from /proc) over its own responses gives its CPU per response, and the
drift hits both alike. Prints each round's ratio, the median and the
bytes of one response body (as sent, compressed) from each.

The servers run the harness's compress configs (tests/bench/conf/), on
ports 18181 (portico) and 18182 (nginx), the app on 13300: run it when no
run.sh is running.
"""
import http.client
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "lib"))
import bench  # noqa: E402  (the harness's config templates)

PORTICO_PORT, NGINX_PORT, APP_PORT = 18181, 18182, 13300
SERVER_CPU, CLIENT_CPU = "1", "0"
SECONDS = 10


def server_cpu_seconds(pid):
    """utime+stime of a process and its children (a master and its workers)."""
    pids = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            pids += [int(child) for child in f.read().split()]
    except OSError:
        pass
    ticks = 0
    for p in pids:
        with open(f"/proc/{p}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def body_bytes(port, coding):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/data.json", headers={"Accept-Encoding": coding})
    response = connection.getresponse()
    size = len(response.read())  # de-chunked, still compressed
    connection.close()
    return size


def main():
    level = sys.argv[1] if len(sys.argv) > 1 else "6"
    coding = sys.argv[2] if len(sys.argv) > 2 else "br"
    connections = sys.argv[3] if len(sys.argv) > 3 else "100"
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    portico_bin = os.environ.get("PORTICO_BIN", os.path.join(ROOT, "build", "portico"))
    run = tempfile.mkdtemp(prefix="portico-side-by-side-")
    for d in ("assets", "nginx-body", "nginx-proxy", "nginx-fastcgi", "nginx-uwsgi", "nginx-scgi"):
        os.makedirs(os.path.join(run, d))
    values = dict(APP_PORT=str(APP_PORT), WWW=run, RUN=run, ASSETS=os.path.join(run, "assets"), LEVEL=level,
                  TLS_PORT="0", CERT="", KEY="", CERTKEY="")
    tags = "compress,keepalive,brotli"
    bench.render_template(os.path.join(HERE, "conf", "portico-compress.toml"), os.path.join(run, "portico.toml"),
                          tags, dict(values, PORT=str(PORTICO_PORT)))
    bench.render_template(os.path.join(HERE, "conf", "nginx.conf"), os.path.join(run, "nginx.conf"),
                          tags, dict(values, PORT=str(NGINX_PORT)))
    log = open(os.path.join(run, "servers.log"), "a")
    started = []

    def start(command, env=None):
        process = subprocess.Popen(["taskset", "-c", SERVER_CPU] + command, stdout=log, stderr=subprocess.STDOUT,
                                   env=dict(os.environ, **(env or {})))
        started.append(process)
        return process

    def wrk(port):
        return subprocess.Popen(["taskset", "-c", CLIENT_CPU, "wrk", "-t1", f"-c{connections}", f"-d{SECONDS}s",
                                 "-H", f"Accept-Encoding: {coding}", f"http://127.0.0.1:{port}/data.json"],
                                stdout=subprocess.PIPE, text=True)

    try:
        start(["node", os.path.join(ROOT, "deploy", "demo-app", "server.js")], {"PORT": str(APP_PORT)})
        portico = start([portico_bin, "-c", os.path.join(run, "portico.toml")])
        nginx = start(["nginx", "-p", run + "/", "-c", os.path.join(run, "nginx.conf"), "-g", "daemon off;"])
        time.sleep(2)
        for port in (PORTICO_PORT, NGINX_PORT):  # warm: pools, encoder memory, the app's JIT
            subprocess.run(["ab", "-k", "-n", "2000", "-c", "20", "-H", f"Accept-Encoding: {coding}",
                            f"http://127.0.0.1:{port}/data.json"], capture_output=True, check=True)
        ratios = []
        for number in range(1, rounds + 1):
            before = server_cpu_seconds(portico.pid), server_cpu_seconds(nginx.pid)
            loads = wrk(PORTICO_PORT), wrk(NGINX_PORT)
            outputs = [load.communicate()[0] for load in loads]
            after = server_cpu_seconds(portico.pid), server_cpu_seconds(nginx.pid)
            done = [int(re.search(r"(\d+) requests in", out).group(1)) for out in outputs]
            cost = [(after[i] - before[i]) / done[i] * 1e6 for i in (0, 1)]
            ratios.append(cost[0] / cost[1])
            print(f"round {number}: portico {cost[0]:,.0f} µs/response ({done[0]}), "
                  f"nginx {cost[1]:,.0f} ({done[1]}), ratio {ratios[-1]:.3f}", flush=True)
        print(f"body bytes: portico {body_bytes(PORTICO_PORT, coding):,}, nginx {body_bytes(NGINX_PORT, coding):,}")
        ratios.sort()
        print(f"{coding} {level} c{connections}: portico / nginx CPU per response, median "
              f"{ratios[len(ratios) // 2]:.3f} (min {ratios[0]:.3f}, max {ratios[-1]:.3f}), {rounds} rounds")
    finally:
        for process in started:
            process.send_signal(signal.SIGTERM)
        for process in started:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


if __name__ == "__main__":
    main()
