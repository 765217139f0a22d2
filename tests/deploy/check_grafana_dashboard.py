#!/usr/bin/env python3
"""Checks deploy/grafana/portico.json against a live portico: the file is
JSON, every query names series that portico's /metrics has (a renamed series
would leave a panel silently empty), every label a query filters, groups or
names in a legend is one those series carry, and the panels docs/operations.md
promises are there.

Usage: check_grafana_dashboard.py PORTICO_BINARY DASHBOARD_JSON
"""

import http.client
import json
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Labels Prometheus adds when it scrapes, which /metrics does not show.
SCRAPE_LABELS = {"instance", "job"}

# What the dashboard must show (docs/operations.md, "Docker, Compose and
# Kubernetes"): a series, and a phrase its query must contain.
PROMISED = [
    ("portico_requests_total", "by (location, code)"),
    ("portico_request_duration_seconds_bucket", "histogram_quantile(0.99"),
    ("portico_upstream_duration_seconds_bucket", "histogram_quantile(0.99"),
    ("portico_proxy_overhead_seconds_bucket", "histogram_quantile(0.99"),
    ("portico_upstream_connections_opened_total", "rate("),
    ("portico_upstream_connections_reused_total", "rate("),
    ("portico_upstream_errors_total", "kind"),
    ("portico_upstream_queued", "portico_upstream_queued"),
    ("portico_tls_handshakes_total", "by (result)"),
    ("portico_tls_handshake_seconds_bucket", "histogram_quantile(0.99"),
]


def closed_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(port, path):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def wait_for_port(log_path, pattern, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match = re.search(pattern, log_path.read_text())
        if match:
            return int(match.group(1))
        time.sleep(0.05)
    raise RuntimeError(f"portico did not log {pattern!r}:\n{log_path.read_text()}")


def live_series(portico):
    """Series name -> label names, from a portico that proxied one request
    to a closed port (a 502: requests, upstream errors and timings)."""
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "portico.toml"
        config.write_text(
            '[server]\nlisten = ["127.0.0.1:0"]\nworkers = 1\n'
            '[metrics]\nlisten = "127.0.0.1:0"\n'
            f'[upstream.app]\nservers = ["127.0.0.1:{closed_port()}"]\n'
            '[[location]]\nname = "app"\nprefix = "/"\nproxy = "app"\n'
        )
        log_path = Path(folder) / "error.log"
        with open(log_path, "w") as log:
            server = subprocess.Popen([portico, "-c", str(config)], stderr=log)
        try:
            port = wait_for_port(log_path, r"listening on \S+ \(port (\d+)\)")
            metrics_port = wait_for_port(log_path, r"metrics on \S+ \(port (\d+)\)")
            get(port, "/")
            # The worker records the request just after its last byte is
            # out: the client can ask /metrics first.
            deadline = time.monotonic() + 10
            while True:
                status, text = get(metrics_port, "/metrics")
                if status != 200:
                    raise RuntimeError(f"/metrics answered {status}")
                if 'portico_requests_total{location="app"' in text or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    series = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            names = [name + suffix for suffix in ("_bucket", "_sum", "_count")]
            for series_name in names if kind == "histogram" else [name]:
                series.setdefault(series_name, set())
        elif line and not line.startswith("#"):
            match = re.match(r"(\w+)(?:\{(.*)\})?\s", line)
            labels = re.findall(r'(\w+)="', match.group(2) or "")
            series.setdefault(match.group(1), set()).update(labels)
    return series


def queries(dashboard):
    """(where, expression, legend) of every query: panel targets and template
    variables."""
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            yield f"panel {panel['title']!r}", target["expr"], target.get("legendFormat", "")
    for variable in dashboard.get("templating", {}).get("list", []):
        if variable.get("type") == "query":
            yield f"variable {variable['name']!r}", variable["definition"], ""


def check_query(where, expression, legend, series):
    problems = []
    names = set(re.findall(r"\bportico_\w+", expression))
    for name in names - series.keys():
        problems.append(f"{where}: {name} is not a series portico exports")
    known = set(SCRAPE_LABELS).union(*(series.get(name, set()) for name in names))
    if any(name.endswith("_bucket") for name in names):
        known.add("le")
    used = set(re.findall(r"(\w+)\s*(?:=~|!~|!=|=)\s*\"", expression))
    grouped = set()
    for clause in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expression):
        grouped.update(label.strip() for label in clause.split(",") if label.strip())
    used |= grouped
    used.update(re.findall(r"label_values\(\s*\w+\s*,\s*(\w+)\s*\)", expression))
    for label in used - known:
        problems.append(f"{where}: label {label} is on none of {sorted(names)}")
    for label in set(re.findall(r"\{\{\s*(\w+)\s*\}\}", legend)) - grouped:
        problems.append(f"{where}: the legend names {label}, which the query does not keep")
    return problems


def main():
    portico, dashboard_path = sys.argv[1], Path(sys.argv[2])
    dashboard = json.loads(dashboard_path.read_text())
    series = live_series(portico)
    problems = []
    ids = [panel["id"] for panel in dashboard["panels"]]
    if len(ids) != len(set(ids)):
        problems.append("two panels share an id")
    all_queries = list(queries(dashboard))
    for where, expression, legend in all_queries:
        problems += check_query(where, expression, legend, series)
    for name, phrase in PROMISED:
        if not any(name in expression and phrase in expression for _, expression, _ in all_queries):
            problems.append(f"no panel queries {name} with {phrase!r}")
    for problem in problems:
        print(f"{dashboard_path}: {problem}", file=sys.stderr)
    if not problems:
        print(f"{dashboard_path}: {len(all_queries)} queries, all on live series")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
