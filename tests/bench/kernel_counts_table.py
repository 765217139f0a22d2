#!/usr/bin/env python3
"""The load-independent counts of kernel_profile.py's runs, one column per server (issue 34).

    tests/bench/kernel_profile.py ... --no-profile --out DIR A=portico=... B=portico=... > RUN.jsonl
    tests/bench/kernel_counts_table.py RUN.jsonl [LABEL...]

Medians over the rounds (min–max) of: system calls, epoll calls and context switches per
response (responses = wrk's rate × the traced time: approximate on a busy machine) and per
epoll event (exact: on a proxied keep-alive cell every response is one client-readable and
one upstream-readable event), events per epoll call, the epoll calls the worker slept in, full batches, reads
and writes of a descriptor already read / written in the same loop turn; then the CPU per
response of the plain runs (noisy on a shared machine: rounds interleave the servers).
"""
import json
IO_CALLS = {"read", "recvfrom", "readv", "recvmsg", "write", "writev", "sendto", "sendmsg", "sendfile"}
import statistics
import sys


def figures(plain, calls):
    # wrk's rate over the time the trace covers (perf may attach late on a busy machine)
    responses = calls["wrk_rps_during"] * calls.get("traced_seconds", calls["seconds"])
    slept = calls.get("epoll_slept", {})
    ecalls = calls["epoll_calls"]
    again = calls.get("same_fd_again_in_turn", {})
    return {
        "req/s (plain run)": plain["rps"],
        "worker CPU µs/response, user": plain["user_us"],
        "worker CPU µs/response, system": plain["sys_us"],
        "worker CPU µs/response, total": plain["user_us"] + plain["sys_us"],
        "wrk CPU µs/response": plain["wrk_us"],
        "Node CPU µs/response": plain["app_us"],
        "worker peak RSS KiB (after warm-up and the plain run)": plain.get("peak_rss_kib", 0),
        "voluntary switches/response (plain run)": plain["vol_per_req"],
        "involuntary switches/response (plain run)": plain["invol_per_req"],
        "system calls/response (traced; wrk's rate × the traced time)": calls["total"] / responses,
        "system calls per epoll event": calls["total"] / max(calls["epoll_events"], 1),
        "reads + writes per epoll event": sum(v for k, v in calls["counts"].items() if k in IO_CALLS)
        / max(calls["epoll_events"], 1),
        "epoll_wait calls/response": ecalls / responses,
        "events/epoll_wait call": calls["events_per_call"],
        "epoll_wait calls the worker slept in": slept.get("slept", 0) / ecalls,
        "epoll_wait calls per sleep (per wakeup)": ecalls / max(slept.get("slept", 0), 1),
        "voluntary switches/response (traced run)": calls.get("vol_during", 0) / responses,
        "epoll_wait calls returning a full batch": calls.get("epoll_full_batches", 0) / ecalls,
        "epoll_wait calls with timeout 0": calls.get("epoll_timeouts", {}).get("0", 0) / ecalls,
        "reads of a socket already read in the turn /response": again.get("read", 0) / responses,
        "writes to a socket already written in the turn /response": again.get("write", 0) / responses,
    }


def main():
    runs = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
    labels = sys.argv[2:] or list(dict.fromkeys(r["server"] for r in runs))
    per = {label: [] for label in labels}
    plains = {}
    for r in runs:
        if r["server"] not in per:
            continue
        if "counts" in r:
            per[r["server"]].append(figures(plains[(r["server"], r["round"])], r))
        else:
            plains[(r["server"], r["round"])] = r
    rows = list(next(iter(per.values()))[0])
    print("| | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for row in rows:
        cells = []
        for label in labels:
            values = [f[row] for f in per[label]]
            pct = "slept" in row or "batch" in row or "timeout" in row
            fmt = (lambda v: f"{v * 100:.1f} %") if pct else \
                ((lambda v: f"{v:,.0f}") if "req/s" in row or "KiB" in row else (lambda v: f"{v:.3f}" if v < 10 else f"{v:.1f}"))
            cells.append(f"{fmt(statistics.median(values))} ({fmt(min(values))}–{fmt(max(values))})")
        print(f"| {row} | " + " | ".join(cells) + " |")
    print(f"\nrounds: {', '.join(f'{k} {len(v)}' for k, v in per.items())}; load average before each run: "
          + ", ".join(r["loadavg_before"].split()[0] for r in runs if "loadavg_before" in r))


if __name__ == "__main__":
    main()
