#!/usr/bin/env python3
"""Shares of a worker's cpu-clock samples from kernel_profile.py's perf.data files.

    tests/bench/kernel_profile_report.py DIR LABEL...

First a table of the medians (min–max) over the rounds of kernel_profile.py's .plain.json and
.calls.json files. Then:

For each label, all rounds' DIR/LABEL-r*.perf.data together (perf script): the share of
samples in user space and in the kernel; the top leaf symbols (as perf report --no-children
--sort sym); the samples whose stack holds each of a few kernel paths (inclusive, so a sample
can count in several); and, for the leaf pvm_irq_enable (where a cpu-clock sample lands once
interrupts are back on: the time before, with them off, is charged there), its nearest caller
that names the work.
"""
import collections
import glob
import json
import subprocess
import sys

# (name, any of these in the stack): inclusive shares
PATHS = [
    ("epoll_wait (do_epoll_wait)", ("do_epoll_wait",)),
    ("  of which going to sleep (__schedule under do_epoll_wait)", None),
    ("  of which ep_send_events (ready list, ->poll of each)", ("ep_send_events",)),
    ("epoll_ctl", ("do_epoll_ctl",)),
    ("read/recv: tcp_recvmsg", ("tcp_recvmsg",)),
    ("write/send: tcp_sendmsg", ("tcp_sendmsg",)),
    ("  of which loopback receive in our context (process_backlog)", ("process_backlog",)),
    ("softirq (do_softirq / handle_softirqs)", ("handle_softirqs", "__do_softirq", "do_softirq")),
    ("waking a reader: sock_def_readable (its wake_up runs with irqs off: charged to pvm_irq_enable)",
     ("sock_def_readable",)),
    ("waking a writer: sk_stream_write_space / tcp_check_space", ("sk_stream_write_space", "tcp_check_space")),
    ("scheduling: __schedule", ("__schedule",)),
    ("syscall entry/exit (leaf in entry/exit code)", None),
    ("setsockopt / getsockopt", ("do_sock_setsockopt", "do_sock_getsockopt", "__sys_setsockopt",
                                 "__sys_getsockopt")),
]
ENTRY_LEAVES = ("entry_SYSCALL_64", "syscall_exit_to_user_mode", "do_syscall_64", "syscall_return_via_sysret",
                "entry_SYSCALL_64_after_hwframe", "entry_SYSCALL_64_safe_stack", "exit_to_user_mode_loop",
                "__x64_sys_", "x64_sys_call")
IRQ_LEAF = "pvm_irq_enable"
SKIP = ("pvm_irq_enable", "__raw_callee_save_pvm_irq_enable", "_raw_spin_unlock_irqrestore", "_raw_spin_unlock_irq", "__local_bh_enable_ip",
        "local_bh_enable", "_raw_spin_unlock_bh", "finish_task_switch.isra.0", "finish_task_switch",
        "__raw_spin_unlock_irqrestore", "rcu_read_unlock_bh", "__rcu_read_unlock")


def samples(path):
    out = subprocess.run(["perf", "script", "-i", path, "-F", "ip,sym,dso"], capture_output=True,
                         text=True).stdout
    stack = []
    for line in out.splitlines():
        line = line.strip()
        if not line:
            if stack:
                yield stack
            stack = []
            continue
        parts = line.split(None, 1)
        if len(parts) < 2:
            continue
        rest = parts[1]
        sym, _, dso = rest.rpartition(" (")
        stack.append((sym or "[unknown]", "kernel" if "kernel.kallsyms" in dso else "user"))
    if stack:
        yield stack


def median(values):
    v = sorted(x for x in values if x is not None)
    return (v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2) if v else None


def table(directory, labels):
    """Medians over the rounds of DIR/LABEL-r*.plain.json and .calls.json, one column a label."""
    rows = collections.OrderedDict()
    for label in labels:
        plain = [json.load(open(f)) for f in sorted(glob.glob(f"{directory}/{label}-r*.plain.json"))]
        calls = [json.load(open(f)) for f in sorted(glob.glob(f"{directory}/{label}-r*.calls.json"))]
        per = lambda c: c["wrk_rps_during"] * c["seconds"]  # responses in the traced window

        def put(name, values, fmt):
            m = median(values)
            cell = "–" if m is None else (fmt.format(m) + f" ({fmt.format(min(values))}–{fmt.format(max(values))})"
                                          if len(values) > 1 else fmt.format(m))
            rows.setdefault(name, {})[label] = cell

        put("req/s (wrk -t1 -c100, no tracer)", [p["rps"] for p in plain], "{:,.0f}")
        put("worker CPU µs/response, user", [p["user_us"] for p in plain], "{:.2f}")
        put("worker CPU µs/response, system", [p["sys_us"] for p in plain], "{:.2f}")
        put("worker CPU µs/response, total", [p["user_us"] + p["sys_us"] for p in plain], "{:.2f}")
        if all("app_us" in p for p in plain):
            put("Node app CPU µs/response", [p["app_us"] for p in plain], "{:.1f}")
            put("wrk CPU µs/response", [p["wrk_us"] for p in plain], "{:.1f}")
        put("machine busy CPU µs/response (both CPUs, CI included)", [p["machine_us"] for p in plain], "{:.1f}")
        put("voluntary switches/response", [p["vol_per_req"] for p in plain], "{:.3f}")
        put("involuntary switches/response", [p["invol_per_req"] for p in plain], "{:.3f}")
        put("system calls/response (traced)", [c["total"] / per(c) for c in calls], "{:.2f}")
        put("epoll_wait calls/response", [c["epoll_calls"] / per(c) for c in calls], "{:.3f}")
        put("responses/epoll_wait call", [per(c) / c["epoll_calls"] for c in calls], "{:.1f}")
        put("events/epoll_wait call", [c["events_per_call"] for c in calls], "{:.1f}")
        put("epoll_wait calls returning 1 event", [100.0 * c["returns_hist"].get("1", 0) / c["epoll_calls"]
                                                    for c in calls], "{:.1f} %")
        put("epoll_wait calls returning ≤ 10 events", [100.0 * sum(v for k, v in c["returns_hist"].items()
                                                                    if int(k) <= 10) / c["epoll_calls"]
                                                        for c in calls], "{:.1f} %")
        names = sorted({k for c in calls for k in c["counts"]})
        for name in names:
            put(f"`{name}`/response", [c["counts"].get(name, 0) / per(c) for c in calls], "{:.3f}")
    print("| | " + " | ".join(labels) + " |\n|---|" + "---|" * len(labels))
    for name, cells in rows.items():
        print(f"| {name} | " + " | ".join(cells.get(l, "–") for l in labels) + " |")
    print()


def main():
    directory, labels = sys.argv[1], sys.argv[2:]
    table(directory, labels)
    for label in labels:
        files = sorted(glob.glob(f"{directory}/{label}-r*.perf.data"))
        total = kernel = entry = 0
        leaf = collections.Counter()
        inclusive = collections.Counter()
        irq_callers = collections.Counter()
        sleeping = 0
        for f in files:
            for stack in samples(f):
                total += 1
                sym, where = stack[0]
                leaf[(sym, where)] += 1
                if where == "kernel":
                    kernel += 1
                names = [s for s, _ in stack]
                present = set(names)
                for name, keys in PATHS:
                    if keys and any(k in present for k in keys):
                        inclusive[name] += 1
                if "do_epoll_wait" in present and "__schedule" in present:
                    sleeping += 1
                if where == "kernel" and sym.startswith(ENTRY_LEAVES):
                    entry += 1
                if sym == IRQ_LEAF:
                    caller = next((s for s in names[1:] if s not in SKIP), "?")
                    irq_callers[caller] += 1
        inclusive["  of which going to sleep (__schedule under do_epoll_wait)"] = sleeping
        inclusive["syscall entry/exit (leaf in entry/exit code)"] = entry
        pct = lambda n: 100.0 * n / total if total else 0.0
        print(f"## {label}: {len(files)} files, {total} samples; kernel {pct(kernel):.1f} %, "
              f"user {pct(total - kernel):.1f} %\n")
        print("| path (stack contains) | share of samples |\n|---|---|")
        for name, _ in PATHS:
            print(f"| {name} | {pct(inclusive[name]):.1f} % |")
        print(f"\nTop leaf symbols (`perf report --no-children --sort sym`), all rounds:\n")
        print("| symbol | where | share |\n|---|---|---|")
        for (sym, where), n in leaf.most_common(25):
            print(f"| {sym} | {where} | {pct(n):.1f} % |")
        n_irq = leaf[(IRQ_LEAF, "kernel")]
        print(f"\n`{IRQ_LEAF}` ({pct(n_irq):.1f} %) by nearest caller:\n")
        print("| caller | share of all samples |\n|---|---|")
        for caller, n in irq_callers.most_common(12):
            print(f"| {caller} | {pct(n):.1f} % |")
        print()


if __name__ == "__main__":
    main()
