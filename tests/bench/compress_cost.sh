#!/usr/bin/env bash
# What compression costs portico, in instructions per request (callgrind,
# a loaded run minus an idle run with the same warm-up, as run.sh's cost
# part measures):
#
#   tests/bench/compress_cost.sh               build/portico (or PORTICO_BIN)
#   PORTICO_BIN=/path/to/portico tests/bench/compress_cost.sh plain   only the config without compress
#
# Two configs, the bench's static one (root for .html/.css, the rest
# proxied to the demo app, deploy/demo-app) without and with `compress =
# true` on both locations. Cases: /index.html, /hello and the CSS asset
# without compress (what a location without compress pays: nothing,
# compared binary to binary);
# with compress, /index.html and a 20 KB CSS asset for a client that
# accepts no coding, the CSS asset in br and gzip (a hot asset: from the
# compressed cache after the warm-up), /hello with gzip (below
# min_length), and a 2 KB and a 100 KB JSON proxied in br, zstd and gzip
# at the default levels. ab -k (HTTP/1.0 kept alive) where the response has a
# length, h2load --h1 (HTTP/1.1, chunked) for the compressed streams.
# Environment: PORTICO_BIN, COST_N (2000; the JSON cases use a tenth),
# BENCH_PORT (18590), BENCH_APP_PORT (13590). Every process started here is
# stopped by its pid on exit.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY="python3 $HERE/lib/bench.py"
PORTICO=${PORTICO_BIN:-$ROOT/build/portico}
PORT=${BENCH_PORT:-18590}
APP_PORT=${BENCH_APP_PORT:-13590}
N=${COST_N:-2000}
WARM=200
ONLY=${1:-}

for tool in node valgrind h2load ab taskset; do
  command -v "$tool" >/dev/null || { echo "compress_cost.sh: $tool is missing" >&2; exit 2; }
done
[ -x "$PORTICO" ] || { echo "compress_cost.sh: no portico at $PORTICO" >&2; exit 2; }

RUN=$(mktemp -d /tmp/portico-compress.XXXXXX)
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

wait_port() { # wait_port PORT: until something answers there (60 s: valgrind starts slowly on a busy machine)
  local i
  for ((i = 0; i < 1200; i++)); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

# The site: the repository's www and a 20 KB stylesheet (bench.py css, as
# run.sh's compress scenarios); the upstream is the demo app, whose
# /data.json is 100 KiB of JSON and /small.json its first 2 KiB. Both
# compressible text, different all along.
cp -r "$ROOT/www" "$RUN/www"
$PY css "$RUN/www/app.css" 20480
PORT=$APP_PORT taskset -c 1 node "$ROOT/deploy/demo-app/server.js" >"$RUN/app.log" 2>&1 &
STARTED+=($!)
wait_port "$APP_PORT" || { echo "the upstream did not start" >&2; cat "$RUN/app.log" >&2; exit 1; }

write_config() { # write_config FILE COMPRESS_LINE
  cat >"$1" <<TOML
[server]
listen = ["127.0.0.1:$PORT"]
workers = 1
max_connections = 19000
keepalive_timeout = "75s"
keepalive_requests = 100000
[log]
level = "warn"
[upstream.app]
servers = ["127.0.0.1:$APP_PORT"]
max_connections = 64
keepalive = 1024
idle_timeout = "4s"
[[location]]
name = "assets"
regex = '\.(html|css)$'
root = "$RUN/www"
$2
[[location]]
name = "app"
prefix = "/"
proxy = "app"
$2
TOML
}
write_config "$RUN/plain.toml" ""
write_config "$RUN/compress.toml" "compress = true"

# Cases: CONFIG|NAME|TOOL|ACCEPT|URL|DIVISOR (N / DIVISOR requests).
CASES=(
  "plain|/index.html|ab||/index.html|1"
  "plain|/hello proxied|ab||/hello|1"
  "plain|/app.css 20 KB|ab||/app.css|1"
  "compress|/index.html, no Accept-Encoding|ab||/index.html|1"
  "compress|/app.css 20 KB, no Accept-Encoding|ab||/app.css|1"
  "compress|/app.css 20 KB in br (cached)|ab|br|/app.css|1"
  "compress|/app.css 20 KB in gzip (cached)|ab|gzip|/app.css|1"
  "compress|/hello proxied, gzip accepted (below min_length)|ab|gzip|/hello|1"
  "compress|/small.json 2 KB proxied in gzip (level 5)|h2load|gzip|/small.json|1"
  "compress|/small.json 2 KB proxied in br (level 4)|h2load|br|/small.json|1"
  "compress|/small.json 2 KB proxied in zstd (level 3)|h2load|zstd|/small.json|1"
  "compress|/data.json 100 KB proxied in gzip (level 5)|h2load|gzip|/data.json|10"
  "compress|/data.json 100 KB proxied in br (level 4)|h2load|br|/data.json|10"
  "compress|/data.json 100 KB proxied in zstd (level 3)|h2load|zstd|/data.json|10"
)

load() { # load TOOL ACCEPT URL COUNT
  local tool=$1 accept=$2 url="http://127.0.0.1:$PORT$3" count=$4 header=()
  [ -n "$accept" ] && header=(-H "Accept-Encoding: $accept")
  if [ "$tool" = ab ]; then
    taskset -c 0 ab -k -r -s 60 -n "$count" -c 10 "${header[@]}" "$url"
  else
    taskset -c 0 h2load --h1 -n "$count" -c 10 "${header[@]}" "$url"
  fi
}

# run CONFIG DIR [CASE]: portico under callgrind, every case of CONFIG as
# warm-up, then CASE's load; prints the Ir of all portico's processes.
run() {
  local config=$1 dir=$2 chosen=${3:-} pid c name tool accept url divisor
  mkdir -p "$dir"
  taskset -c 1 valgrind --tool=callgrind --trace-children=yes \
    --callgrind-out-file="$dir/callgrind.out.%p" "$PORTICO" -c "$RUN/$config.toml" >"$dir/log" 2>&1 &
  pid=$!
  STARTED+=("$pid")
  # run is called in $(...): STARTED does not reach the exit trap from here.
  wait_port "$PORT" || { echo "portico did not start" >&2; cat "$dir/log" >&2; stop "$pid"; return 1; }
  for c in "${CASES[@]}"; do
    IFS='|' read -r cfg name tool accept url divisor <<<"$c"
    [ "$cfg" = "$config" ] && load "$tool" "$accept" "$url" "$WARM" >/dev/null 2>&1
  done
  if [ -n "$chosen" ]; then
    IFS='|' read -r cfg name tool accept url divisor <<<"$chosen"
    load "$tool" "$accept" "$url" $((N / divisor)) >"$dir/load.out" 2>&1
    grep -qE "^Complete requests: *$((N / divisor))|$((N / divisor)) succeeded" "$dir/load.out" ||
      echo "$name: the load did not complete" >&2
  fi
  stop "$pid"
  $PY callgrind-total "$dir"/callgrind.out.*
}

echo "portico: $PORTICO"
for config in plain compress; do
  [ -n "$ONLY" ] && [ "$ONLY" != "$config" ] && continue
  idle=$(run "$config" "$RUN/$config-idle") || exit 1
  i=0
  for c in "${CASES[@]}"; do
    IFS='|' read -r cfg name tool accept url divisor <<<"$c"
    [ "$cfg" = "$config" ] || continue
    i=$((i + 1))
    loaded=$(run "$config" "$RUN/$config-$i" "$c") || exit 1
    printf '  %-58s %10d instructions/req\n' "$name" $(((loaded - idle) / (N / divisor)))
  done
done
