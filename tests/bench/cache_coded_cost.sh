#!/usr/bin/env bash
# What a cache hit costs a client that accepts gzip, in instructions per
# request (callgrind on one worker, a loaded run minus an idle run with the
# same warm-up, as compress_cost.sh measures): a 10 KiB compressible page
# proxied with `cache` and `compress = true`, hit by
# `ab -k -c10 -H 'Accept-Encoding: gzip'`. Before the coded variants were
# stored, each hit went through the compression filter (the worker's
# compressed cache kept the bytes of the copy it had); now it is served
# from the stored gzip variant.
#
#   tests/bench/cache_coded_cost.sh                 build-dev/portico (or PORTICO_BIN)
#
# Environment: PORTICO_BIN, COST_N (2000), BENCH_PORT (18690),
# BENCH_APP_PORT (13690), CODING (gzip; the Accept-Encoding sent, `none`:
# no header). Every process started here is stopped by its pid on exit.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY="python3 $HERE/lib/bench.py"
PORTICO=${PORTICO_BIN:-$ROOT/build-dev/portico}
PORT=${BENCH_PORT:-18690}
APP_PORT=${BENCH_APP_PORT:-13690}
N=${COST_N:-2000}
CODING=${CODING:-gzip}
WARM=200

for tool in valgrind ab python3; do
  command -v "$tool" >/dev/null || { echo "cache_coded_cost.sh: $tool is missing" >&2; exit 2; }
done
[ -x "$PORTICO" ] || { echo "cache_coded_cost.sh: no portico at $PORTICO" >&2; exit 2; }

RUN=$(mktemp -d /tmp/portico-cache-coded.XXXXXX)
# KEEP=1: the callgrind files stay in $RUN, for callgrind_annotate.
STARTED=()
alive() { kill -0 "$1" 2>/dev/null; }
stop() { # stop PID: TERM, wait up to 60 s (callgrind writes its output), then KILL
  local pid=$1 i
  alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null
  for ((i = 0; i < 600; i++)); do alive "$pid" || break; sleep 0.1; done
  alive "$pid" && kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}
cleanup() {
  local i
  for ((i = ${#STARTED[@]} - 1; i >= 0; i--)); do stop "${STARTED[$i]}"; done
  [ -n "${KEEP:-}" ] || rm -rf "$RUN"
}
trap cleanup EXIT

wait_port() { # wait_port PORT: until something answers there
  local i
  for ((i = 0; i < 1200; i++)); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

# The upstream: one 10 KiB HTML page, fresh for an hour.
cat >"$RUN/app.py" <<PY
import http.server
PAGE = "".join("<p>line %d of a page that compresses well</p>\n" % i for i in range(240))[:10240].encode()
class Page(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.send_header("Cache-Control", "max-age=3600")
        self.end_headers()
        self.wfile.write(PAGE)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", $APP_PORT), Page).serve_forever()
PY
python3 "$RUN/app.py" &
STARTED+=($!)
wait_port "$APP_PORT" || { echo "the upstream did not start" >&2; exit 1; }

cat >"$RUN/portico.toml" <<TOML
[server]
listen = ["127.0.0.1:$PORT"]
workers = 1
keepalive_requests = 100000
[log]
level = "warn"
[cache.pages]
memory = "64MiB"
[upstream.app]
servers = ["127.0.0.1:$APP_PORT"]
[[location]]
prefix = "/"
proxy = "app"
compress = true
cache = { zone = "pages" }
TOML

load() { # load COUNT
  local header=()
  [ "$CODING" != none ] && header=(-H "Accept-Encoding: $CODING")
  ab -k -r -s 60 -n "$1" -c 10 "${header[@]}" "http://127.0.0.1:$PORT/page.html"
}

# run DIR [COUNT]: portico under callgrind, the warm-up, then COUNT hits;
# prints the Ir of all portico's processes.
run() {
  local dir=$1 count=${2:-0} pid
  mkdir -p "$dir"
  valgrind --tool=callgrind --trace-children=yes \
    --callgrind-out-file="$dir/callgrind.out.%p" "$PORTICO" -c "$RUN/portico.toml" >"$dir/log" 2>&1 &
  pid=$!
  STARTED+=("$pid")
  wait_port "$PORT" || { echo "portico did not start" >&2; cat "$dir/log" >&2; stop "$pid"; return 1; }
  load "$WARM" >/dev/null 2>&1
  if [ "$count" -gt 0 ]; then
    load "$count" >"$dir/load.out" 2>&1
    grep -qE "^Complete requests: *$count" "$dir/load.out" || echo "the load did not complete" >&2
  fi
  stop "$pid"
  $PY callgrind-total "$dir"/callgrind.out.*
}

echo "portico: $PORTICO"
idle=$(run "$RUN/idle") || exit 1
loaded=$(run "$RUN/loaded" "$N") || exit 1
printf '  %-58s %10d instructions/req\n' "10 KiB page, cache hit in $CODING" $(((loaded - idle) / N))
