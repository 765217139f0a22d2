#!/usr/bin/env bash
# Issue 37's response cache benchmark, instructions part: instructions per
# cache hit (callgrind, one worker) of portico and nginx on the cache
# scenario's configs (conf/portico-cache.toml, conf/nginx-cache.conf: nginx's
# cache folder on a tmpfs), in front of the demo app sending
# Cache-Control: public, max-age=3600; and portico's static /index.html of
# the same bytes as the demo page `/`, the baseline of "a hit of / at most
# 1.2x a static file".
#
#   tests/bench/cache_cost.sh [SERVER...]      (portico nginx by default)
#
# Each server runs under callgrind (--trace-children: nginx's master,
# worker, cache manager and loader; portico's master and worker). The
# warm-up (h2load --h1 -n 200 -c 10 on each URL) stores `/` and /image.jpg;
# then `h2load --h1 -n N -c 10` on one URL, and a run with the warm-up alone
# is subtracted: what is left is N hits. Environment: PORTICO_BIN
# (build/portico), COST_N (2000), BENCH_PORT (18590), BENCH_APP_PORT
# (13590). Every process started here is stopped by its pid on exit.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY="python3 $HERE/lib/bench.py"
PORTICO=${PORTICO_BIN:-$ROOT/build/portico}
PORT=${BENCH_PORT:-18590}
APP_PORT=${BENCH_APP_PORT:-13590}
N=${COST_N:-2000}
WARM=200
SERVERS=("$@")
[ ${#SERVERS[@]} -gt 0 ] || SERVERS=(portico nginx)

for tool in node valgrind h2load taskset nginx curl; do
  command -v "$tool" >/dev/null || { echo "cache_cost.sh: $tool is missing" >&2; exit 2; }
done
[ -x "$PORTICO" ] || { echo "cache_cost.sh: no portico at $PORTICO" >&2; exit 2; }

RUN=$(mktemp -d /tmp/portico-cache-cost.XXXXXX)
SHM=$(mktemp -d /dev/shm/portico-cache-cost.XXXXXX)
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
  rm -rf "$RUN" "$SHM"
}
trap cleanup EXIT

wait_port() { # wait_port PORT: until something answers there (60 s: a start under valgrind)
  local i
  for ((i = 0; i < 1200; i++)); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

CACHE_CONTROL="public, max-age=3600" PORT=$APP_PORT taskset -c 1 node "$ROOT/deploy/demo-app/server.js" \
  >"$RUN/app.log" 2>&1 &
STARTED+=($!)
wait_port "$APP_PORT" || { echo "the app did not start" >&2; cat "$RUN/app.log" >&2; exit 1; }
mkdir -p "$RUN/assets" "$RUN"/nginx-{body,proxy,fastcgi,uwsgi,scgi}
curl -sf "http://127.0.0.1:$APP_PORT/" >"$RUN/assets/index.html" || { echo "no / from the app" >&2; exit 1; }

values=(PORT="$PORT" APP_PORT="$APP_PORT" RUN="$RUN" ASSETS="$RUN/assets" CACHE_DIR="$SHM/nginx")
$PY template "$HERE/conf/portico-cache.toml" "$RUN/portico.toml" proxy,keepalive,cleartext,cache "${values[@]}"
$PY template "$HERE/conf/nginx-cache.conf" "$RUN/nginx.conf" proxy,keepalive,cleartext,cache "${values[@]}"
"$PORTICO" -t -c "$RUN/portico.toml" >/dev/null 2>&1 || { "$PORTICO" -t -c "$RUN/portico.toml" >&2; exit 1; }
nginx -t -q -p "$RUN/" -c "$RUN/nginx.conf" -g 'daemon off;' || exit 1

urls_of() { # the URLs measured on a server (and its warm-up set)
  case $1 in
    portico) echo "/ /image.jpg /index.html" ;;
    nginx) echo "/ /image.jpg" ;;
  esac
}
# all_ok FILE COUNT: h2load's output says COUNT requests, every one a 2xx.
all_ok() {
  grep -q "requests: $2 total, $2 started, $2 done, $2 succeeded" "$1" &&
    grep -q "status codes: $2 2xx" "$1" && return 0
  echo "not $2 answers 2xx ($1):" >&2
  tail -8 "$1" >&2
  return 1
}

# run SERVER DIR [URL]: the server under callgrind, the warm-up on each of
# its URLs, then N requests on URL if given; prints the Ir of all its
# processes. In a subshell ($(run ...)): it stops its server itself.
run() {
  local server=$1 dir=$2 url=${3:-} pid u command
  mkdir -p "$dir"
  case $server in
    portico) command=("$PORTICO" -c "$RUN/portico.toml") ;;
    nginx) command=(nginx -p "$RUN/" -c "$RUN/nginx.conf" -g 'daemon off;') ;;
  esac
  rm -rf "$SHM/nginx"
  taskset -c 1 valgrind --tool=callgrind --trace-children=yes \
    --callgrind-out-file="$dir/callgrind.out.%p" "${command[@]}" >"$dir/log" 2>&1 &
  pid=$!
  STARTED+=("$pid")
  wait_port "$PORT" || { echo "$server did not start" >&2; cat "$dir/log" >&2; stop "$pid"; return 1; }
  for u in $(urls_of "$server"); do
    taskset -c 0 h2load --h1 -n "$WARM" -c 10 "http://127.0.0.1:$PORT$u" >"$dir/warm.out" 2>&1
    all_ok "$dir/warm.out" "$WARM" || { stop "$pid"; return 1; }
  done
  if [ -n "$url" ]; then
    taskset -c 0 h2load --h1 -n "$N" -c 10 "http://127.0.0.1:$PORT$url" >"$dir/load.out" 2>&1
    all_ok "$dir/load.out" "$N" || { stop "$pid"; return 1; }
  fi
  stop "$pid"
  $PY callgrind-total "$dir"/callgrind.out.*
}

echo "portico: $PORTICO ($("$PORTICO" --version 2>/dev/null | head -1)); $(nginx -v 2>&1)"
for server in "${SERVERS[@]}"; do
  idle=$(run "$server" "$RUN/$server-idle") || exit 1
  for url in $(urls_of "$server"); do
    loaded=$(run "$server" "$RUN/$server-${url//\//_}" "$url") || exit 1
    echo "  $server $url: $(( (loaded - idle) / N )) instructions/request (h2load --h1 -c 10, $N requests minus the warm-up's run)"
  done
done
