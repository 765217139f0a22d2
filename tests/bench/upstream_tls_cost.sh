#!/usr/bin/env bash
# What TLS to the upstream costs portico, in instructions per request
# (callgrind): proxied GET /hello to a node:https upstream (certificates made
# here by the openssl command line, verified against their CA, pooled with
# keepalive = 64) against the same node app over cleartext http. Also prints
# the upstream connections opened (handshakes) per request, from the
# metrics listener.
#
#   PORTICO_BIN=/path/to/portico tests/bench/upstream_tls_cost.sh
#   CONFIGS="plain" PORTICO_BIN=/old/portico ...   # a cleartext-only before/after
#
# Each config runs under callgrind; `h2load --h1 -n N -c 10` asks for /hello
# after a warm-up, and an idle run with the same warm-up is subtracted.
# Environment: PORTICO_BIN (build/portico), TLS_N (2000), BENCH_PORT
# (18592), BENCH_APP_PORT (13592, and +1 for https), BENCH_METRICS_PORT
# (18593), CONFIGS ("plain tls"). Every process started here is stopped by
# its pid on exit.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY="python3 $HERE/lib/bench.py"
PORTICO=${PORTICO_BIN:-$ROOT/build/portico}
PORT=${BENCH_PORT:-18592}
APP_PORT=${BENCH_APP_PORT:-13592}
TLS_APP_PORT=$((APP_PORT + 1))
METRICS_PORT=${BENCH_METRICS_PORT:-18593}
N=${TLS_N:-2000}
CONFIGS=${CONFIGS:-plain tls}
WARM=200
URL="http://127.0.0.1:$PORT/hello"

for tool in node valgrind h2load taskset openssl curl; do
  command -v "$tool" >/dev/null || { echo "upstream_tls_cost.sh: $tool is missing" >&2; exit 2; }
done
[ -x "$PORTICO" ] || { echo "upstream_tls_cost.sh: no portico at $PORTICO" >&2; exit 2; }

RUN=$(mktemp -d /tmp/portico-upstream-tls.XXXXXX)
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

(
  cd "$RUN" &&
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key \
      -out ca.pem -subj /CN=bench-ca -days 2 -addext basicConstraints=critical,CA:TRUE &&
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout app.key \
      -out app.pem -subj /CN=app.test -days 2 -CA ca.pem -CAkey ca.key \
      -addext subjectAltName=DNS:app.test
) >"$RUN/openssl.log" 2>&1 || { echo "openssl failed" >&2; cat "$RUN/openssl.log" >&2; exit 1; }

# The same app over http and https.
PORT=$APP_PORT TLS_PORT=$TLS_APP_PORT CERT=$RUN/app.pem KEY=$RUN/app.key taskset -c 1 node -e '
  const fs = require("node:fs");
  const app = (req, res) => {
    res.writeHead(200, { "Content-Type": "text/plain", "Content-Length": 6 });
    res.end("hello\n");
  };
  require("node:http").createServer(app).listen(Number(process.env.PORT), "127.0.0.1");
  const tls = { cert: fs.readFileSync(process.env.CERT), key: fs.readFileSync(process.env.KEY) };
  require("node:https").createServer(tls, app).listen(Number(process.env.TLS_PORT), "127.0.0.1");' \
  >"$RUN/app.log" 2>&1 &
STARTED+=($!)
wait_port "$APP_PORT" && wait_port "$TLS_APP_PORT" ||
  { echo "the upstream did not start" >&2; cat "$RUN/app.log" >&2; exit 1; }

# config NAME UPSTREAM: the bench's proxy setup with UPSTREAM's lines.
config() {
  cat >"$RUN/$1.toml" <<TOML
[server]
listen = ["127.0.0.1:$PORT"]
workers = 1
[log]
level = "warn"
[metrics]
listen = "127.0.0.1:$METRICS_PORT"
[upstream.app]
keepalive = 64
$2
[[location]]
name = "app"
prefix = "/"
proxy = "app"
TOML
}
config plain "servers = [\"127.0.0.1:$APP_PORT\"]"
config tls "servers = [\"127.0.0.1:$TLS_APP_PORT\"]
tls = { ca = \"$RUN/ca.pem\", server_name = \"app.test\" }"

# all_ok FILE COUNT: h2load's output says COUNT requests, every one a 2xx
# (a config that answered 404 or 502 would be measured, not the rules).
all_ok() {
  grep -q "requests: $2 total, $2 started, $2 done, $2 succeeded" "$1" &&
    grep -q "status codes: $2 2xx" "$1" && return 0
  echo "not $2 answers 2xx ($1):" >&2
  tail -8 "$1" >&2
  return 1
}

# run CONFIG DIR [LOAD...]: portico under callgrind, the warm-up, then the
# load command if given; prints the Ir of all portico's processes, then the
# upstream connections it opened. It runs in a subshell ($(run ...)): it
# stops its portico itself, whatever happens.
run() {
  local config=$1 dir=$2 pid opened
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
  opened=$(curl -s "http://127.0.0.1:$METRICS_PORT/metrics" |
    awk '/^portico_upstream_connections_opened_total\{/ { sum += $2 } END { print sum + 0 }')
  stop "$pid"
  echo "$($PY callgrind-total "$dir"/callgrind.out.*) $opened"
}

echo "portico: $PORTICO"
for config in $CONFIGS; do
  "$PORTICO" -t -c "$RUN/$config.toml" >/dev/null 2>&1 || { echo "portico -t refuses $config:" >&2; "$PORTICO" -t -c "$RUN/$config.toml" >&2; exit 1; }
  read -r idle idle_opened <<<"$(run "$config" "$RUN/$config-idle")" || exit 1
  [ -n "$idle" ] || exit 1
  read -r loaded opened <<<"$(run "$config" "$RUN/$config-load" h2load --h1 -n "$N" -c 10 "$URL")" || exit 1
  [ -n "$loaded" ] || exit 1
  per=$(( (loaded - idle) / N ))
  eval "per_$config=$per"
  echo "  $config: $per instructions/request (GET /hello proxied, h2load --h1 -c 10, $N requests minus idle);" \
    "upstream connections opened: $opened for $((WARM + N)) requests ($idle_opened in the warm-up alone)"
done
if [ -n "${per_plain:-}" ] && [ -n "${per_tls:-}" ]; then
  echo "  tls - plain: $(( per_tls - per_plain )) instructions/request"
fi
