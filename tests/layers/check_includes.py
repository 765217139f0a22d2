#!/usr/bin/env python3
"""Fails when an #include in src/ runs up the layers.

The layers, lowest first (docs/architecture.md): a folder may include its own files and those of the folders listed
for it, nothing else. `main.cpp` composes everything and is not checked.

    core      loop and handle wrappers, clock, buffers, logging (the
              error log's set-up from the config is worker/error_log)
    config    the file, validated into an immutable snapshot
    transport what a connection reads and writes through: the output
              queue, the Transport surface, the plain socket
    tls       the TLS transport
    metrics   counters, histograms, the access log, the admin endpoint
    router    locations compiled at load
    http      what both protocols share: request state, Exchange, Handler,
              header and status helpers
    http1     the HTTP/1 codec            http2   the HTTP/2 codec
    compress, static, proxy: filters and handlers, on the Exchange (proxy
              also on tls: an upstream's connection can be TLS)
    rules     redirect, rewrite and error pages: steps and a filter
    access    limits and access control: admission checks, shared tables
    cache     the response cache: RFC 9111's policy, the shared store,
              its steps and filter
    acme      certificates from an ACME CA: the client (run in its own
              process), the board it shares with the workers, HTTP-01;
              the OCSP responses it fetches for the workers to staple
    worker    composes the rest: sites, handlers, filters, pools
    convert   `portico convert`: nginx's syntax, read and translated
    cli       the command line's other commands

KNOWN lists the includes that run up today, each to be removed by the
reshaping (the request path's issue): the check also fails when one of them
is gone, so the list only shrinks.

    tests/layers/check_includes.py [SRC_DIR]
"""
import pathlib
import re
import sys

BELOW = {
    "core": [],
    "config": ["core"],
    "transport": ["core", "config"],
    "tls": ["core", "config", "transport", "metrics"],
    "metrics": ["core", "config"],
    "router": ["core", "config"],
    "http": ["core", "config", "transport", "metrics", "router"],
    "http1": ["core", "config", "transport", "metrics", "router", "http"],
    "http2": ["core", "config", "transport", "metrics", "router", "http"],
    "compress": ["core", "config", "metrics", "http"],
    "static": ["core", "config", "metrics", "http"],
    "proxy": ["core", "config", "transport", "tls", "metrics", "http"],
    "rules": ["core", "config", "metrics", "router", "http"],
    "access": ["core", "config", "metrics", "http"],
    "cache": ["core", "config", "metrics", "http"],
    "acme": ["core", "config", "transport", "tls", "metrics", "http"],
    "worker": ["core", "config", "transport", "tls", "metrics", "router", "http", "http1", "http2",
               "compress", "static", "proxy", "rules", "access", "cache", "acme"],
    "convert": ["core", "config"],
    "cli": ["core", "config", "metrics", "convert"],
}

# file -> the folders it includes against the layers, today.
KNOWN = {}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z0-9_]+)/[^"]+"', re.M)


def main():
    src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[2] / "src")
    problems = []
    seen_known = {}
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".cpp", ".hpp", ".h") or path.parent == src:
            continue
        relative = path.relative_to(src).as_posix()
        folder = relative.split("/")[0]
        if folder not in BELOW:
            problems.append(f"src/{relative}: folder '{folder}' has no place in the layers (add it to BELOW)")
            continue
        allowed = set(BELOW[folder]) | {folder}
        up = {target for target in INCLUDE.findall(path.read_text()) if target not in allowed}
        known = KNOWN.get(relative, set())
        for target in sorted(up - known):
            problems.append(f"src/{relative} includes {target}/, which is above {folder}/ "
                            f"(allowed: {', '.join(BELOW[folder]) or 'nothing'})")
        if relative in KNOWN:
            seen_known[relative] = up & known
    for relative, targets in KNOWN.items():
        gone = targets - seen_known.get(relative, set())
        for target in sorted(gone):
            problems.append(f"src/{relative} no longer includes {target}/: remove it from KNOWN "
                            f"in {pathlib.Path(__file__).name}")
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"includes point down the layers ({sum(len(t) for t in KNOWN.values())} known exceptions left)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
