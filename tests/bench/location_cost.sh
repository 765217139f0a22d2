#!/usr/bin/env bash
# What a location's keys cost portico, in instructions per request
# (callgrind): proxied GET /hello through a location with LOCATION_KEYS
# against the same location without them. TOP_LEVEL is added to both
# configs (the [limit.NAME] a location names, say).
#
#   PORTICO_BIN=/path/to/portico tests/bench/location_cost.sh NAME 'LOCATION_KEYS' ['TOP_LEVEL']
#
# rules_cost.sh and limits_cost.sh call it with their keys.
#
# The upstream is a node:http one-liner answering "hello" to every path.
# Each config runs under callgrind; `h2load --h1 -n N -c 10` asks for /hello
# after a warm-up, and an idle run with the same warm-up is subtracted.
# Environment: PORTICO_BIN (build/portico), COST_N (2000), BENCH_PORT
# (18590), BENCH_APP_PORT (13590). Every process started here is stopped by
# its pid on exit.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY="python3 $HERE/lib/bench.py"
PORTICO=${PORTICO_BIN:-$ROOT/build/portico}
PORT=${BENCH_PORT:-18590}
APP_PORT=${BENCH_APP_PORT:-13590}
N=${COST_N:-2000}
[ $# -ge 2 ] || { echo "usage: location_cost.sh NAME 'LOCATION_KEYS' ['TOP_LEVEL']" >&2; exit 2; }
FEATURE=$1
FEATURE_KEYS=$2
TOP_LEVEL=${3:-}
WARM=200
URL="http://127.0.0.1:$PORT/hello"

for tool in node valgrind h2load taskset; do
  command -v "$tool" >/dev/null || { echo "location_cost.sh: $tool is missing" >&2; exit 2; }
done
[ -x "$PORTICO" ] || { echo "location_cost.sh: no portico at $PORTICO" >&2; exit 2; }

RUN=$(mktemp -d /tmp/portico-cost.XXXXXX)
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

PORT=$APP_PORT taskset -c 1 node -e '
  const http = require("node:http");
  http.createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/plain", "Content-Length": 6 });
    res.end("hello\n");
  }).listen(Number(process.env.PORT), "127.0.0.1");' >"$RUN/app.log" 2>&1 &
STARTED+=($!)
wait_port "$APP_PORT" || { echo "the upstream did not start" >&2; cat "$RUN/app.log" >&2; exit 1; }

# config NAME KEYS: the bench's proxy setup with KEYS in its one location.
config() {
  cat >"$RUN/$1.toml" <<TOML
$TOP_LEVEL
[server]
listen = ["127.0.0.1:$PORT"]
workers = 1
[log]
level = "warn"
[upstream.app]
servers = ["127.0.0.1:$APP_PORT"]
keepalive = 64
[[location]]
name = "app"
prefix = "/"
proxy = "app"
$2
TOML
}
config plain ""
config "$FEATURE" "$FEATURE_KEYS"

# all_ok FILE COUNT: h2load's output says COUNT requests, every one a 2xx
# (a config that answered 404 or 502 would be measured, not the keys).
all_ok() {
  grep -q "requests: $2 total, $2 started, $2 done, $2 succeeded" "$1" &&
    grep -q "status codes: $2 2xx" "$1" && return 0
  echo "not $2 answers 2xx ($1):" >&2
  tail -8 "$1" >&2
  return 1
}

# run CONFIG DIR [LOAD...]: portico under callgrind, the warm-up, then the
# load command if given; prints the Ir of all portico's processes. It runs
# in a subshell ($(run ...)): it stops its portico itself, whatever happens.
run() {
  local config=$1 dir=$2 pid
  shift 2
  mkdir -p "$dir"
  taskset -c 1 valgrind --tool=callgrind --trace-children=yes \
    --callgrind-out-file="$dir/callgrind.out.%p" "$PORTICO" -c "$RUN/$config.toml" >"$dir/log" 2>&1 &
  pid=$!
  STARTED+=("$pid")
  wait_port "$PORT" || { echo "portico did not start" >&2; cat "$dir/log" >&2; stop "$pid"; return 1; }
  taskset -c 0 h2load --h1 -n "$WARM" -c 10 "$URL" >"$dir/warm.out" 2>&1
  all_ok "$dir/warm.out" "$WARM" || { stop "$pid"; return 1; }
  if [ $# -gt 0 ]; then
    taskset -c 0 "$@" >"$dir/load.out" 2>&1
    all_ok "$dir/load.out" "$N" || { stop "$pid"; return 1; }
  fi
  stop "$pid"
  $PY callgrind-total "$dir"/callgrind.out.*
}

echo "portico: $PORTICO"
for config in plain "$FEATURE"; do
  "$PORTICO" -t -c "$RUN/$config.toml" >/dev/null 2>&1 || { echo "portico -t refuses $config:" >&2; "$PORTICO" -t -c "$RUN/$config.toml" >&2; exit 1; }
  idle=$(run "$config" "$RUN/$config-idle") || exit 1
  loaded=$(run "$config" "$RUN/$config-load" h2load --h1 -n "$N" -c 10 "$URL") || exit 1
  per=$(( (loaded - idle) / N ))
  [ "$config" = plain ] && per_plain=$per || per_feature=$per
  echo "  $config: $per instructions/request (GET /hello proxied, h2load --h1 -c 10, $N requests minus idle)"
done
echo "  $FEATURE - plain: $(( per_feature - per_plain )) instructions/request"
