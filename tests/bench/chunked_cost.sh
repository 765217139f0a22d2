#!/usr/bin/env bash
# What a proxied chunked response costs portico, in instructions per request
# (callgrind) and system calls per request (strace): the case run.sh's cost
# part cannot show, since its ab speaks HTTP/1.0 and a chunked response to
# an HTTP/1.0 client is decoded and ended by the close.
#
#   tests/bench/chunked_cost.sh                 build/portico (or PORTICO_BIN)
#   PORTICO_BIN=/path/to/portico tests/bench/chunked_cost.sh
#
# The upstream is a node:http one-liner whose GET /chunked writes two pieces
# (res.write twice, then res.end: Transfer-Encoding: chunked, as an Express
# app streaming a page does). portico runs the bench's proxy config under
# callgrind; `h2load --h1 -n N -c 10` (HTTP/1.1, kept alive) asks for it
# after a warm-up, and an idle run with the same warm-up is subtracted.
# `ab -n N -c 10` (HTTP/1.0, a connection per request) measures the decoded
# path. Environment: PORTICO_BIN, CHUNKED_N (2000), FIRST / SECOND (the two
# pieces' sizes, 1000 and 3000 bytes), BENCH_PORT (18580), BENCH_APP_PORT
# (13580), KEEP_CALLGRIND (a folder: the HTTP/1.1 run's callgrind.out files
# are copied there, for callgrind_annotate). Every process started here is
# stopped by its pid on exit.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY="python3 $HERE/lib/bench.py"
PORTICO=${PORTICO_BIN:-$ROOT/build/portico}
PORT=${BENCH_PORT:-18580}
APP_PORT=${BENCH_APP_PORT:-13580}
N=${CHUNKED_N:-2000}
WARM=200
FIRST=${FIRST:-1000}
SECOND=${SECOND:-3000}
URL="http://127.0.0.1:$PORT/chunked"

for tool in node valgrind strace h2load ab taskset; do
  command -v "$tool" >/dev/null || { echo "chunked_cost.sh: $tool is missing" >&2; exit 2; }
done
[ -x "$PORTICO" ] || { echo "chunked_cost.sh: no portico at $PORTICO" >&2; exit 2; }

RUN=$(mktemp -d /tmp/portico-chunked.XXXXXX)
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
  rm -rf "$RUN"
}
trap cleanup EXIT

wait_port() { # wait_port PORT: until something answers there (10 s)
  local i
  for ((i = 0; i < 200; i++)); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

PORT=$APP_PORT FIRST=$FIRST SECOND=$SECOND taskset -c 1 node -e '
  const http = require("node:http");
  const first = "x".repeat(Number(process.env.FIRST)), second = "y".repeat(Number(process.env.SECOND));
  http.createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/plain" });
    res.write(first);
    res.write(second);
    res.end();
  }).listen(Number(process.env.PORT), "127.0.0.1");' >"$RUN/app.log" 2>&1 &
STARTED+=($!)
wait_port "$APP_PORT" || { echo "the upstream did not start" >&2; cat "$RUN/app.log" >&2; exit 1; }

$PY template "$HERE/conf/portico-proxy.toml" "$RUN/portico.toml" proxy,keepalive \
  PORT="$PORT" APP_PORT="$APP_PORT" WWW="$ROOT/www" RUN="$RUN"

# run_portico DIR [LOAD...]: portico under callgrind, the warm-up, then the
# load command if given; prints the Ir of all portico's processes.
run_portico() {
  local dir=$1 pid
  shift
  mkdir -p "$dir"
  taskset -c 1 valgrind --tool=callgrind --trace-children=yes \
    --callgrind-out-file="$dir/callgrind.out.%p" "$PORTICO" -c "$RUN/portico.toml" >"$dir/log" 2>&1 &
  pid=$!
  STARTED+=("$pid")
  wait_port "$PORT" || { echo "portico did not start" >&2; cat "$dir/log" >&2; return 1; }
  taskset -c 0 h2load --h1 -n "$WARM" -c 10 "$URL" >"$dir/warm.out" 2>&1
  if [ $# -gt 0 ]; then taskset -c 0 "$@" >"$dir/load.out" 2>&1; fi
  stop "$pid"
  $PY callgrind-total "$dir"/callgrind.out.*
}

# The bytes a client gets, once, outside valgrind.
"$PORTICO" -c "$RUN/portico.toml" >"$RUN/plain.log" 2>&1 &
plain=$!
STARTED+=("$plain")
wait_port "$PORT"
curl -s --raw -o "$RUN/raw.txt" -D "$RUN/head.txt" "$URL"
echo "response head (HTTP/1.1 client):"
sed 's/^/  /' "$RUN/head.txt"
echo "raw body: $(wc -c <"$RUN/raw.txt") bytes, chunk-size lines: $(grep -a -c -E '^[0-9a-f]+'$'\r''?$' "$RUN/raw.txt")"
# strace: system calls per request, HTTP/1.1 kept alive.
taskset -c 0 h2load --h1 -n "$WARM" -c 10 "$URL" >/dev/null 2>&1
args=()
for p in $($PY tree "$plain"); do args+=(-p "$p"); done
strace -f -c -o "$RUN/strace.txt" "${args[@]}" 2>/dev/null &
spid=$!
sleep 1
taskset -c 0 h2load --h1 -n "$N" -c 10 "$URL" >"$RUN/strace-load.out" 2>&1
kill -INT "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
stop "$plain"

idle=$(run_portico "$RUN/idle") || exit 1
h1=$(run_portico "$RUN/h1" h2load --h1 -n "$N" -c 10 "$URL") || exit 1
h10=$(run_portico "$RUN/h10" ab -n "$N" -c 10 "$URL") || exit 1
if [ -n "${KEEP_CALLGRIND:-}" ]; then mkdir -p "$KEEP_CALLGRIND" && cp "$RUN"/h1/callgrind.out.* "$KEEP_CALLGRIND"/; fi
grep -q "$N succeeded" "$RUN/h1/load.out" || { echo "h2load did not complete:" >&2; tail -5 "$RUN/h1/load.out" >&2; }
grep -q "^Complete requests: *$N" "$RUN/h10/load.out" || echo "ab did not complete" >&2

echo "portico: $PORTICO"
echo "GET /chunked (pieces of $FIRST and $SECOND bytes), $N requests, minus an idle run:"
echo "  HTTP/1.1 kept alive (h2load --h1 -c 10): $(( (h1 - idle) / N )) instructions/req"
echo "  HTTP/1.0, a connection each (ab -c 10):  $(( (h10 - idle) / N )) instructions/req"
syscalls=$(python3 - "$RUN/strace.txt" "$N" <<'EOF'
import sys
total, per = 0, {}
for line in open(sys.argv[1]):
    fields = line.split()
    if len(fields) >= 5 and fields[3].isdigit():
        name = fields[-1]
        if name != "total":
            per[name] = int(fields[3])
            total += int(fields[3])
n = int(sys.argv[2])
main = ", ".join(f"{k} {v / n:.2f}" for k, v in sorted(per.items(), key=lambda kv: -kv[1])[:4])
print(f"{total / n:.2f} ({main})")
EOF
)
echo "  HTTP/1.1 kept alive, system calls/req: $syscalls"
