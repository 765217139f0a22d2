#!/usr/bin/env python3
"""The kernel side of one server's worker under one proxied load (issue 34).

    tests/bench/kernel_profile.py [--url /hello] [--load wrk100] [--seconds 8] [--rounds 2] \
        --out DIR SERVER...
      SERVER      portico=PATH | nginx   (label=SPEC to name it, e.g. before=portico=/work/before/portico)

One Node app (CPU 1) and one server at a time (CPU 1, the harness's proxy config), the load
tool and perf on CPU 0, as side_by_side.py --apart. Per server and round, three loaded runs
of the same wrk command, each on a fresh wrk:

  plain    nothing attached: req/s, the worker's utime/stime per response (/proc/PID/stat,
           all its threads), voluntary/involuntary context switches per response
           (/proc/PID/task/*/status), the machine's busy CPU per response (/proc/stat),
           the Node app's and wrk's CPU per response
  profile  perf record -e cpu-clock -g -p WORKER (kernel + user stacks)
  calls    perf record -e raw_syscalls:sys_exit,sys_enter -e sched:sched_switch -p WORKER: every
           system call with its return value: calls per response, epoll_wait/epoll_pwait calls
           and events per call, the timeouts they were given (epoll_timeouts), the calls that
           returned a full batch (maxevents), the calls the worker slept in (epoll_slept: a
           switch away in state S between entry and exit), and the voluntary switches in that
           window (vol_during), and the reads / writes of a descriptor already read / written
           in the same loop turn (same_fd_again_in_turn: what batching a turn's writes could merge)
  --no-profile skips the second run (no perf.data)

Writes DIR/LABEL-rN.{plain.json,perf.data,report.txt,calls.json} and prints one JSON line
per run (returns_hist: epoll calls by events returned, buckets 0-10, 11-20, 21-50,
51-128; errors: failed calls by -errno; epoll_fds: epoll calls by the instance waited on). Every process started here is stopped by its pid.
"""
import argparse
import collections
import json
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
import bench  # noqa: E402

PORT, APP_PORT = int(os.environ.get("KP_PORT", "18281")), int(os.environ.get("KP_APP_PORT", "13391"))
SERVER_CPU, CLIENT_CPU = "1", "0"
TAGS = {"proxy", "keepalive", "cleartext"}
# x86_64 numbers of the calls these servers make on this path
NAMES = {0: "read", 1: "write", 3: "close", 19: "readv", 20: "writev", 44: "sendto", 45: "recvfrom",
         46: "sendmsg", 47: "recvmsg", 54: "setsockopt", 55: "getsockopt", 232: "epoll_wait",
         233: "epoll_ctl", 281: "epoll_pwait", 441: "epoll_pwait2", 288: "accept4", 43: "accept",
         42: "connect", 41: "socket", 72: "fcntl", 16: "ioctl", 228: "clock_gettime", 202: "futex",
         7: "poll", 23: "select", 270: "pselect6", 96: "gettimeofday", 284: "eventfd", 290: "eventfd2",
         283: "timerfd_create", 286: "timerfd_settime", 287: "timerfd_gettime", 13: "rt_sigaction",
         14: "rt_sigprocmask", 39: "getpid", 186: "gettid", 40: "sendfile", 17: "pread64"}
EPOLL = {"epoll_wait", "epoll_pwait", "epoll_pwait2"}
IO_DIRECTION = {"read": "read", "recvfrom": "read", "readv": "read", "recvmsg": "read", "write": "write",
                "writev": "write", "sendto": "write", "sendmsg": "write", "sendfile": "write"}


def threads(pid):
    return [int(t) for t in os.listdir(f"/proc/{pid}/task")]


def cpu(pid):
    """(utime, stime) seconds of a process (all threads: /proc/PID/stat sums them)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / bench.CLK_TCK, int(fields[12]) / bench.CLK_TCK


def switches(pid):
    v = n = 0
    for t in threads(pid):
        try:
            with open(f"/proc/{pid}/task/{t}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches"):
                        v += int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches"):
                        n += int(line.split()[1])
        except FileNotFoundError:
            pass
    return v, n


def peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))


def sched(pid):
    """The worker's policy, nice and priority, from /proc/PID/sched."""
    keep = {}
    with open(f"/proc/{pid}/sched") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k.strip() in ("policy", "prio"):
                keep[k.strip()] = v.strip()
    return keep


def machine_busy():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (v[0] + v[1] + v[2] + v[5] + v[6]) / bench.CLK_TCK


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def children(pid):
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return [int(x) for x in out]


def comm(pid):
    with open(f"/proc/{pid}/cmdline") as f:
        return f.read().replace("\0", " ").strip()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("servers", nargs="+")
    p.add_argument("--url", default="/hello")
    p.add_argument("--connections", type=int, default=100)
    p.add_argument("--seconds", type=int, default=8)
    p.add_argument("--call-seconds", type=int, default=4)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--out", required=True)
    p.add_argument("--no-profile", action="store_true")
    o = p.parse_args()
    os.makedirs(o.out, exist_ok=True)
    run = tempfile.mkdtemp(prefix="portico-kprof-")
    log = open(os.path.join(run, "servers.log"), "a")
    started = []

    def start(command, env=None):
        proc = subprocess.Popen(["taskset", "-c", SERVER_CPU] + command, stdout=log, stderr=subprocess.STDOUT,
                                env=dict(os.environ, **(env or {})))
        started.append(proc)
        return proc

    def stop(proc):
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc in started:
            started.remove(proc)

    def start_server(spec):
        name, _, path = spec.partition("=")
        own = tempfile.mkdtemp(dir=run)
        for d in ("nginx-body", "nginx-proxy", "nginx-fastcgi", "nginx-uwsgi", "nginx-scgi"):
            os.makedirs(os.path.join(own, d))
        values = dict(PORT=str(PORT), APP_PORT=str(APP_PORT), WWW=os.path.join(ROOT, "www"), RUN=own,
                      ASSETS=own, LEVEL="6", TLS_PORT="0", CERT="", KEY="", CERTKEY="")
        template = {"portico": "portico-proxy.toml", "nginx": "nginx.conf"}[name]
        conf = os.path.join(own, template)
        bench.render_template(os.path.join(HERE, "conf", template), conf, TAGS, values)
        return start({"portico": [path, "-c", conf],
                      "nginx": ["nginx", "-p", own + "/", "-c", conf, "-g", "daemon off;"]}[name])

    def wrk(seconds):
        url = f"http://127.0.0.1:{PORT}{o.url}"
        return subprocess.Popen(["taskset", "-c", CLIENT_CPU, "wrk", "-t1", f"-c{o.connections}",
                                 f"-d{seconds}s", url], stdout=subprocess.PIPE, text=True)

    def finish(w):
        out = w.stdout.read()
        _, status, usage = os.wait4(w.pid, 0)
        w.returncode = os.waitstatus_to_exitcode(status)
        fig = bench.parse_wrk(out)
        fig["wrk_cpu"] = usage.ru_utime + usage.ru_stime
        if fig["requests"] == 0 or fig["non2xx3xx"] or fig["socket_errors"]:
            print(f"WARNING wrk: {out}", file=sys.stderr)
        return fig

    try:
        start(["node", os.path.join(ROOT, "deploy", "demo-app", "server.js")], {"PORT": str(APP_PORT)})
        time.sleep(1.5)
        specs = []
        for s in o.servers:
            label, _, spec = s.partition("=") if s.split("=")[0] not in ("portico", "nginx") else (s, "", s)
            specs.append((label if spec else s, spec or s))
        for number in range(1, o.rounds + 1):
            order = specs[(number - 1) % len(specs):] + specs[:(number - 1) % len(specs)]
            for label, spec in order:
                tag = f"{label}-r{number}"
                master = start_server(spec)
                time.sleep(1.5)
                kids = children(master.pid)
                worker = next((k for k in kids if "worker" in comm(k)), kids[0] if kids else master.pid)
                subprocess.run(["ab", "-k", "-n", "3000", "-c", "20", f"http://127.0.0.1:{PORT}{o.url}"],
                               capture_output=True, check=True)
                # plain
                app = started[0].pid
                c0, s0, b0, l0, a0 = cpu(worker), switches(worker), machine_busy(), loadavg(), cpu(app)
                fig = finish(wrk(o.seconds))
                c1, s1, b1, a1 = cpu(worker), switches(worker), machine_busy(), cpu(app)
                n = fig["requests"]
                plain = dict(server=label, round=number, worker=worker, worker_cmd=comm(worker),
                             threads=len(threads(worker)), requests=n, rps=fig["rps"],
                             user_us=(c1[0] - c0[0]) / n * 1e6, sys_us=(c1[1] - c0[1]) / n * 1e6,
                             vol_per_req=(s1[0] - s0[0]) / n, invol_per_req=(s1[1] - s0[1]) / n,
                             machine_us=(b1 - b0) / n * 1e6, loadavg_before=l0, sched=sched(worker),
                             app_us=(sum(a1) - sum(a0)) / n * 1e6, wrk_us=fig["wrk_cpu"] / n * 1e6,
                             peak_rss_kib=peak_rss_kib(worker))
                with open(os.path.join(o.out, f"{tag}.plain.json"), "w") as f:
                    json.dump(plain, f, indent=1)
                print(json.dumps(plain), flush=True)
                # profile
                pfig = {"rps": None}
                if not o.no_profile:
                    data = os.path.join(o.out, f"{tag}.perf.data")
                    w = wrk(o.seconds)
                    perf = subprocess.Popen(["taskset", "-c", CLIENT_CPU, "perf", "record", "-q", "-e",
                                             "cpu-clock", "-g", "-p", str(worker), "-o", data, "--", "sleep",
                                             str(o.seconds - 1)], stdout=log, stderr=subprocess.STDOUT)
                    perf.wait()
                    pfig = finish(w)
                # calls
                calls_data = os.path.join(run, f"{tag}.calls.data")
                w = wrk(o.call_seconds + 1)
                time.sleep(0.5)
                s_calls = switches(worker)
                perf = subprocess.Popen(["taskset", "-c", CLIENT_CPU, "perf", "record", "-q", "-e",
                                         "raw_syscalls:sys_exit", "-e", "raw_syscalls:sys_enter",
                                         "-e", "sched:sched_switch", "-p", str(worker), "-o", calls_data,
                                         "--", "sleep", str(o.call_seconds)], stdout=log, stderr=subprocess.STDOUT)
                perf.wait()
                vol_during = switches(worker)[0] - s_calls[0]
                cfig = finish(w)
                stop(master)
                script = subprocess.run(["perf", "script", "-i", calls_data, "-F", "time,trace"],
                                        capture_output=True, text=True).stdout
                # The window traced, from the trace itself: perf may start late on a busy machine.
                stamps = re.findall(r"^\s*(\d+\.\d+):", script, re.M)
                traced_seconds = float(stamps[-1]) - float(stamps[0]) if len(stamps) > 1 else o.call_seconds
                counts, epoll_events, hist = collections.Counter(), 0, collections.Counter()
                errors, epoll_fds = collections.Counter(), collections.Counter()
                # Per epoll call: the timeout it was given, whether it returned a full batch
                # (maxevents), whether the worker slept in it (a sched_switch away from the
                # worker in state S between its entry and exit).
                # And per loop turn (from one epoll call to the next): writes and reads of a
                # descriptor already written / read in that turn, which batching the turn's
                # writes (or reading until EAGAIN) could merge.
                timeouts, slept, full = collections.Counter(), collections.Counter(), 0
                entered, sleeping = None, False
                turn_io, repeated_io = set(), collections.Counter()
                for line in script.splitlines():
                    if "prev_state=" in line:
                        if entered is not None and re.search(r"prev_state=[SD]", line) and \
                                f"prev_pid={worker} " in line:
                            sleeping = True
                        continue
                    e = re.search(r"NR (\d+) \((\w+), (\w+), (\w+), (\w+)", line)
                    direction = IO_DIRECTION.get(NAMES.get(int(e.group(1)))) if e else None
                    if direction:
                        key = (direction, int(e.group(2), 16))
                        if key in turn_io:
                            repeated_io[direction] += 1
                        turn_io.add(key)
                    if e and NAMES.get(int(e.group(1))) in EPOLL:
                        turn_io.clear()
                        epoll_fds[f"{NAMES[int(e.group(1))]}(fd {int(e.group(2), 16)})"] += 1
                        timeout = int(e.group(5), 16)
                        timeout = timeout - (1 << 64) if timeout >= 1 << 63 else timeout
                        timeout = timeout - (1 << 32) if (1 << 31) <= timeout < (1 << 32) else timeout
                        entered, sleeping = (timeout, int(e.group(4), 16)), False
                        timeouts["-1" if timeout < 0 else ("0" if timeout == 0 else ">0")] += 1
                        continue
                    m = re.search(r"NR (\d+) = (-?\d+)", line)
                    if not m:
                        continue
                    if NAMES.get(int(m.group(1))) in EPOLL and entered is not None:
                        slept["slept" if sleeping else "did not sleep"] += 1
                        if int(m.group(2)) >= entered[1]:
                            full += 1
                        entered = None
                    if int(m.group(2)) < 0:
                        errors[f"{NAMES.get(int(m.group(1)), m.group(1))} {m.group(2)}"] += 1
                    name = NAMES.get(int(m.group(1)), f"nr{m.group(1)}")
                    counts[name] += 1
                    if name in EPOLL:
                        r = int(m.group(2))
                        epoll_events += max(r, 0)
                        hist[min(r, 10) if r <= 10 else (20 if r <= 20 else (50 if r <= 50 else 128))] += 1
                os.unlink(calls_data)
                ecalls = sum(counts[e] for e in EPOLL)
                calls = dict(server=label, round=number, wrk_rps_during=cfig["rps"],
                             profile_rps=pfig["rps"], seconds=o.call_seconds, traced_seconds=traced_seconds,
                             total=sum(counts.values()), counts=dict(counts.most_common()),
                             epoll_calls=ecalls, epoll_events=epoll_events,
                             events_per_call=epoll_events / ecalls if ecalls else None,
                             errors=dict(errors), epoll_fds=dict(epoll_fds),
                             epoll_timeouts=dict(timeouts), epoll_slept=dict(slept), epoll_full_batches=full,
                             vol_during=vol_during, same_fd_again_in_turn=dict(repeated_io),
                             returns_hist={str(k): v for k, v in sorted(hist.items())})
                with open(os.path.join(o.out, f"{tag}.calls.json"), "w") as f:
                    json.dump(calls, f, indent=1)
                print(json.dumps(calls), flush=True)
    finally:
        for proc in list(started):
            stop(proc)


if __name__ == "__main__":
    main()
