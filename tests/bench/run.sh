#!/usr/bin/env bash
# portico vs nginx vs h2o vs HAProxy, one worker each, on this machine.
#
#   tests/bench/run.sh                     full run (~38 min quiet): throughput, cost, memory
#   tests/bench/run.sh --quick             3 s runs, 1 repeat, smaller counts (~9 min)
#   tests/bench/run.sh --server portico --scenario static --load wrk100 [--url /image.jpg]
#   tests/bench/run.sh --parts cost --server nginx,portico
#   tests/bench/run.sh --scenario tls,tls-rsa --quick      the TLS cells only
#   tests/bench/run.sh --scenario h2 [--quick]             the HTTP/2 cells only
#   tests/bench/run.sh --scenario h2 --parts cost          HTTP/2 instructions per request only
#   tests/bench/run.sh --scenario tls --parts cost         HTTP/1.1-over-TLS instructions per request only
#   tests/bench/run.sh --scenario compress-1,compress-6    the compression cells only
#   tests/bench/run.sh --render results/raw/STAMP    re-render a run's tables
#
# Options (lists are comma-separated):
#   --server LIST     app, portico, nginx, h2o, haproxy, express  (default: all)
#   --scenario LIST   app, proxy, static, proxy-noka, tls, tls-rsa, h2,
#                     compress-1, compress-6                     (default: all;
#                     with --parts cost: h2 and tls measure the HTTP/2 and the
#                     HTTP/1.1-over-TLS cases, and the cleartext ones only when
#                     another scenario is named too)
#   --load LIST       wrk100, wrk1000, ab, wrk10, full-hs, resumed-hs, h2-m10, h2-m1, page,
#                     wrk100-gzip, wrk100-br, wrk10-gzip, wrk10-br, wrk1-gzip, wrk1-br
#                     (default: all; full-hs and resumed-hs exist in the tls
#                     scenarios only, h2-m10, h2-m1 and page in h2 only,
#                     wrk100-gzip and wrk100-br in the compress ones only, wrk10
#                     for /files/10m.bin only; wrk10-* and wrk1-*, the compress
#                     cells at lower concurrency, only when named here)
#   --url LIST        only these URLs (each scenario keeps its own when empty)
#   --parts LIST      throughput, cost, memory                  (default: all;
#                     with --scenario/--load/--url only throughput unless given)
#   --repeat N        repeats per cell, medians reported        (default 3)
#   --duration S      wrk and h2load -D seconds                 (default 10)
#   --quick           --duration 3 --repeat 1, ab/page/callgrind/strace counts / 4
#   --out FILE        the markdown report (default results/latest.md for a full
#                     run, results/partial.md for anything filtered or --quick)
#   --no-install      do not apt-get anything
#   --no-build        use build/portico as it is (or PORTICO_BIN)
#   --server-sched P  start every server under `chrt --P 0` (batch, other):
#                     the same scheduling policy for all of them (the bench's
#                     portico configs leave worker_scheduling unset, so its
#                     workers keep it too)
#
# Environment: PORTICO_BIN (default build/portico), BENCH_PORT (18080; the
# compress scenarios' Express listens there too, as the server under test),
# BENCH_TLS_PORT (18443, the tls scenarios' TLS listener), BENCH_APP_PORT (3000).
#
# The servers and the Node app are pinned to CPU 1, the load tools to CPU 0.
# Every process started here is stopped by its pid on exit.
set -uo pipefail
{ # the whole script is parsed before it runs: editing it during a run is safe

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY="python3 $HERE/lib/bench.py"
PORT=${BENCH_PORT:-18080}
TLS_PORT=${BENCH_TLS_PORT:-18443}
APP_PORT=${BENCH_APP_PORT:-3000}
WWW="$ROOT/www"
PORTICO=${PORTICO_BIN:-$ROOT/build/portico}
SERVER_CPU=1
CLIENT_CPU=0

REPEAT=3
SERVER_SCHED=""     # --server-sched: a chrt policy for every server
DURATION=10
AB_N=20000           # ab -c 100, a new connection per request; also the TLS handshake count
                     # and the requests of the h2 page-load cell (h2load -c1 -m20)
CG_N=2000            # requests measured under callgrind (ab -k -c 10)
CG_WARM=200          # warm-up requests per URL under callgrind (idle run too)
ST_N=10000           # requests measured under strace (ab -k -c 10)
MEM_CONNS=10000      # idle keep-alive connections of the memory test
QUICK=0
F_SERVERS="" F_SCENARIOS="" F_LOADS="" F_URLS="" PARTS="" OUT="" INSTALL=1 BUILD=1 RENDER_ONLY=""

die() { echo "run.sh: $*" >&2; exit 2; }
ARGS_TEXT="$*"
while [ $# -gt 0 ]; do
  case "$1" in
    --server|--servers) F_SERVERS=$2; shift ;;
    --scenario|--scenarios) F_SCENARIOS=$2; shift ;;
    --load|--loads) F_LOADS=$2; shift ;;
    --url|--urls) F_URLS=$2; shift ;;
    --parts|--part) PARTS=$2; shift ;;
    --repeat) REPEAT=$2; shift ;;
    --duration) DURATION=$2; shift ;;
    --quick) QUICK=1 ;;
    --out) OUT=$2; shift ;;
    --no-install) INSTALL=0 ;;
    --no-build) BUILD=0 ;;
    --server-sched) SERVER_SCHED=$2; shift ;;
    --render) RENDER_ONLY=$2; shift ;;
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift
done
if [ "$QUICK" = 1 ]; then
  DURATION=3 REPEAT=1 AB_N=5000 CG_N=500 CG_WARM=100 ST_N=2500
fi
FILTERED=0
[ -n "$F_SERVERS$F_SCENARIOS$F_LOADS$F_URLS" ] && FILTERED=1
if [ -z "$PARTS" ]; then
  if [ -n "$F_SCENARIOS$F_LOADS$F_URLS" ]; then PARTS=throughput; else PARTS=throughput,cost,memory; fi
fi
if [ -z "$OUT" ]; then
  if [ "$FILTERED" = 0 ] && [ "$QUICK" = 0 ] && [ "$PARTS" = throughput,cost,memory ]; then
    OUT="$HERE/results/latest.md"
  else
    OUT="$HERE/results/partial.md"
  fi
fi
mkdir -p "$HERE/results"

if [ -n "$RENDER_ONLY" ]; then
  $PY render --dir "$RENDER_ONLY" --out "$OUT" --title "portico benchmark"
  exit 0
fi

in_list() { # in_list ITEM "a,b,c" (an empty list holds everything)
  [ -z "$2" ] && return 0
  case ",$2," in *",$1,"*) return 0 ;; esac
  return 1
}
want_part() { in_list "$1" "$PARTS"; }

# --- the matrix ----------------------------------------------------------------
# tls, tls-rsa and h2 are the static scenario's config with a TLS listener on
# TLS_PORT (ECDSA P-256 or RSA 2048 certificate); their cells go there. h2: the
# TLS listener offers h2 by ALPN and every cell is HTTP/2 (h2load).
# compress-1 and compress-6: compression at level 1 or 6 (gzip and br alike;
# level_of) of a 20 KB stylesheet from disk (COMPRESS_CSS, made at the run's
# start) and of the demo app's 100 KiB /data.json, proxied; Express with
# compression() serves the same two itself (tests/bench/express).
SCENARIOS="app proxy static proxy-noka tls tls-rsa h2 compress-1 compress-6"
servers_of() {
  case "$1" in
    app) echo app ;;
    proxy|proxy-noka|tls|tls-rsa|h2) echo portico nginx h2o haproxy ;;
    static) echo portico nginx h2o ;;
    compress-*) echo portico nginx express ;;
  esac
}
urls_of() {
  case "$1" in
    app|proxy) echo /hello / /image.jpg ;;
    static) echo /index.html /image.jpg $BIG_FILES ;;   # its / is the proxy scenario's /: add it with --url /
    proxy-noka) echo /hello ;;
    tls|h2) echo /index.html /image.jpg /hello ;;
    tls-rsa) echo /index.html ;;
    compress-*) echo "$COMPRESS_CSS" /data.json ;;
  esac
}
level_of() { # the compression level of a compress scenario (gzip level, brotli quality)
  case "$1" in
    compress-*) echo "${1#compress-}" ;;
    *) echo 6 ;;
  esac
}
# The Accept-Encoding a load sends; nothing for the loads without one.
accept_of() {
  case "$1" in
    *-gzip) echo gzip ;;
    *-br) echo br ;;
  esac
}
# The compress cells at lower concurrency: on request only (--load names them).
COMPRESS_LOW_LOADS="wrk10-gzip wrk10-br wrk1-gzip wrk1-br"
NGINX_BROTLI=/usr/lib/nginx/modules/ngx_http_brotli_filter_module.so
tls_of() { # the certificate's key type of a TLS scenario; nothing for cleartext
  case "$1" in
    tls|h2) echo ecdsa ;;
    tls-rsa) echo rsa ;;
  esac
}
config_of() { # the config template a scenario uses
  case "$1" in
    tls|tls-rsa|h2) echo static ;;
    compress-*) echo compress ;;
    *) echo "$1" ;;
  esac
}
# The URLs a scenario's config can serve (--url picks among them).
possible_urls_of() {
  case "$1" in
    app|proxy|proxy-noka) echo /hello / /image.jpg /api/time ;;
    static) echo /index.html /image.jpg / /hello $BIG_FILES ;;
    compress-*) urls_of "$1" ;;
  esac
}
cell_urls() {
  local u
  if [ -z "$F_URLS" ]; then urls_of "$1"; return; fi
  for u in $(possible_urls_of "$1"); do in_list "$u" "$F_URLS" && echo "$u"; done
}
tags_of() {
  local tls; tls=$(tls_of "$1")
  case "$(config_of "$1")" in
    proxy) echo -n proxy,keepalive ;;
    static) echo -n static,keepalive ;;
    proxy-noka) echo -n proxy,nokeepalive ;;
    compress) echo -n compress,keepalive
              [ -e "$NGINX_BROTLI" ] && echo -n ,brotli ;;
  esac
  if [ "$1" = h2 ]; then echo ,tls,h2
  elif [ -n "$tls" ]; then echo ,tls,tls-h1
  else echo ,cleartext; fi
}
LOADS="wrk100 wrk1000 ab"
# The large files (see make_files) get wrk only: ab -n 20000 would move
# 200 GiB, and at -c1000 the socket buffers of a thousand 10 MiB responses
# measure memory pressure, not the server. 10 MiB gets -c10 besides -c100:
# at -c100 loopback is saturated and a response waits ~1 s behind 99 others,
# at -c10 latency is the server's again; CPU per request is comparable.
BIG_FILES="/files/1m.bin /files/10m.bin"
loads_of_url() {
  case "$1" in
    /files/1m.bin) echo wrk100 ;;
    /files/10m.bin) echo wrk10 wrk100 ;;
    *) echo $LOADS ;;
  esac
}
# cells_of SCENARIO SERVER: its cells, one "LOAD URL [N/A REASON]" a line, as
# --load and --url select them. Cleartext scenarios: each URL under each load.
# tls: full and resumed handshakes (a new connection per request) on the small
# /index.html, then keep-alive requests; tls-rsa: full handshakes only. h2:
# h2load -c100 with 10 or 1 streams in flight per connection on each URL, then
# the page load (one connection, the 20 assets of PAGE_URL, 20 streams at once).
cells_of() {
  local scenario=$1 server=$2 url load cell list=()
  case "$scenario" in
    tls) list=("full-hs /index.html" "resumed-hs /index.html"
               "wrk100 /index.html" "wrk100 /image.jpg" "wrk100 /hello") ;;
    tls-rsa) list=("full-hs /index.html") ;;
    h2) list=("h2-m10 /index.html" "h2-m1 /index.html" "h2-m10 /image.jpg" "h2-m1 /image.jpg"
              "h2-m10 /hello" "h2-m1 /hello" "page $PAGE_URL") ;;
    # Each URL in gzip and br; uncompressed (wrk100, no Accept-Encoding) in
    # compress-6 only: the level does not matter to it.
    compress-*)
      for url in $(cell_urls "$scenario"); do
        [ "$scenario" = compress-6 ] && list+=("wrk100 $url")
        list+=("wrk100-gzip $url" "wrk100-br $url")
        for load in $COMPRESS_LOW_LOADS; do
          [ -n "$F_LOADS" ] && in_list "$load" "$F_LOADS" && list+=("$load $url")
        done
      done ;;
    *) for url in $(cell_urls "$scenario"); do
         for load in $(loads_of_url "$url"); do list+=("$load $url"); done
       done ;;
  esac
  for cell in "${list[@]}"; do
    load=${cell%% *} url=${cell#* }
    in_list "$load" "$F_LOADS" && in_list "$url" "$F_URLS" || continue
    # HAProxy answers /index.html from memory in the TLS config (for the
    # handshake cells) but serves no files: no keep-alive file cells.
    if [ "$server" = haproxy ] && [ "$load" != full-hs ] && [ "$load" != resumed-hs ] &&
       [ -n "$(tls_of "$scenario")" ] && [ "$url" != /hello ]; then
      echo "$cell serves no files"
    elif [ "$server" = nginx ] && [ "$(accept_of "$load")" = br ] && [ ! -e "$NGINX_BROTLI" ]; then
      echo "$cell no brotli module (Debian's libnginx-mod-http-brotli-filter is not installed)"
    else
      echo "$cell"
    fi
  done
}
# The URLs start_server checks (200, and /image.jpg's length) before the cells.
check_urls_of() {
  if [ "$2" = haproxy ] && [ -n "$(tls_of "$1")" ]; then echo /index.html /hello
  elif [ "$1" = h2 ]; then echo /index.html /image.jpg /hello "${PAGE_FILES[0]}" "${PAGE_FILES[-1]}"
  else urls_of "$1"; fi
}

# --- HTTP/2 page load ---------------------------------------------------------------
# 20 assets of 1-50 KB (text: CSS and JS), made at the run's start in the
# run's temp dir (ASSETS/asset/), served under /asset/ in the h2 scenario.
# The page cell's URL is the label PAGE_URL; h2load gets the 20 URLs from
# PAGE_LIST (-i) and requests them in turn.
PAGE_URL=/asset/
PAGE_KB=(1 2 3 4 5 6 7 8 10 12 14 16 18 20 24 28 32 38 44 50)
PAGE_FILES=()
for ((i = 0; i < ${#PAGE_KB[@]}; i++)); do
  if ((i % 2)); then PAGE_FILES+=("$(printf '/asset/a%02d.js' $((i + 1)))")
  else PAGE_FILES+=("$(printf '/asset/a%02d.css' $((i + 1)))"); fi
done

# --- compression assets ----------------------------------------------------------------------
# The compress scenarios' stylesheet: 20 KB of CSS rules, each different
# (bench.py css), in the run's temp dir (ASSETS/css/), served from disk by
# portico, nginx and Express alike.
COMPRESS_CSS=/css/app.css
make_compress_assets() {
  [ -e "$ASSETS$COMPRESS_CSS" ] && return 0
  mkdir -p "$ASSETS/css"
  $PY css "$ASSETS$COMPRESS_CSS" 20480
}

# --- processes -------------------------------------------------------------------
STARTED=()           # every pid this script started in the background
RUN=$(mktemp -d /tmp/portico-bench.XXXXXX)
POLICY_CREATED=0

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

# stop_tree PID [SIGNAL] [SECONDS]: signal the process, wait for it and its
# descendants (found before the signal), then SIGKILL whatever is left.
stop_tree() {
  local pid=$1 sig=${2:-TERM} wait_s=${3:-10} tree p i
  alive "$pid" || return 0
  tree=$($PY tree "$pid")
  kill -"$sig" "$pid" 2>/dev/null
  for ((i = 0; i < wait_s * 10; i++)); do
    local any=0
    for p in $tree; do alive "$p" && [ "$(awk '{print $3}' /proc/$p/stat 2>/dev/null)" != Z ] && any=1; done
    [ $any = 0 ] && break
    sleep 0.1
  done
  for p in $tree; do alive "$p" && kill -KILL "$p" 2>/dev/null; done
  wait "$pid" 2>/dev/null
  forget "$pid"
  return 0
}

# forget PID: no longer ours to stop (it has exited), so a recycled pid is safe.
forget() {
  local i
  for i in "${!STARTED[@]}"; do [ "${STARTED[$i]}" = "$1" ] && unset 'STARTED[i]'; done
}

cleanup() {
  local i
  trap - EXIT INT TERM
  local pids=("${STARTED[@]}")
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop_tree "${pids[$i]}" TERM 5; done
  if [ "$POLICY_CREATED" = 1 ]; then rm -f /usr/sbin/policy-rc.d; fi
  rm -rf "$RUN"
}
trap cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT TERM

# --- install and build ---------------------------------------------------------------
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
install_missing() {
  local need=() pair cmd pkg
  for pair in nginx:nginx h2o:h2o haproxy:haproxy wrk:wrk ab:apache2-utils valgrind:valgrind \
              callgrind_annotate:valgrind strace:strace taskset:util-linux node:nodejs python3:python3 \
              h2load:nghttp2-client openssl:openssl varnishd:varnish; do
    cmd=${pair%%:*} pkg=${pair#*:}
    command -v "$cmd" >/dev/null 2>&1 || need+=("$pkg")
  done
  [ -x /usr/bin/time ] || need+=(time)
  [ -e "$NGINX_BROTLI" ] || need+=(libnginx-mod-http-brotli-filter)   # nginx's br (compress scenarios)
  [ ${#need[@]} -eq 0 ] && return 0
  mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
  echo "installing: ${need[*]}" >&2
  # Packaged servers must not start on their default ports while installing.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee /usr/sbin/policy-rc.d >/dev/null &&
      as_root chmod +x /usr/sbin/policy-rc.d && POLICY_CREATED=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq >/dev/null 2>&1
  for pkg in "${need[@]}"; do  # one by one: a missing one does not stop the others
    as_root apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null 2>&1 ||
      echo "could not install $pkg" >&2
  done
  if [ "$POLICY_CREATED" = 1 ]; then as_root rm -f /usr/sbin/policy-rc.d; POLICY_CREATED=0; fi
}
# Express and compression() for the compress scenarios, at the versions of
# tests/bench/express/package-lock.json, into its node_modules (not in git).
install_express() {
  [ -d "$HERE/express/node_modules/compression" ] && return 0
  command -v npm >/dev/null 2>&1 || { echo "npm missing: express cells n/a" >&2; return 1; }
  echo "installing: express, compression (npm ci in tests/bench/express)" >&2
  npm ci --prefix "$HERE/express" --no-audit --no-fund >"$RUN/npm.log" 2>&1 ||
    { tail -5 "$RUN/npm.log" >&2; echo "could not install express: express cells n/a" >&2; }
}
compress_wanted() { in_list compress-1 "$F_SCENARIOS" || in_list compress-6 "$F_SCENARIOS"; }
[ "$INSTALL" = 1 ] && install_missing
[ "$INSTALL" = 1 ] && want_part throughput && compress_wanted && in_list express "$F_SERVERS" && install_express
for tool in wrk ab node taskset /usr/bin/time; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is missing (run without --no-install)"
done

if [ "$BUILD" = 1 ] && [ -z "${PORTICO_BIN:-}" ]; then
  echo "building portico..." >&2
  if ! TARGET=portico "$ROOT/deploy/build.sh" build >"$RUN/build.log" 2>&1; then
    tail -20 "$RUN/build.log" >&2
    if [ -x "$PORTICO" ]; then echo "build failed: using the existing $PORTICO" >&2
    else echo "build failed and no $PORTICO: portico cells will be n/a" >&2; fi
  fi
fi

# Run a private copy: a rebuild of build/ during the run must not mix binaries.
PORTICO_INFO="none"
if [ -x "$PORTICO" ]; then
  PORTICO_INFO="$PORTICO, built $(date -u -r "$PORTICO" '+%Y-%m-%d %H:%M:%S UTC'), sha256 $(sha256sum "$PORTICO" | cut -c1-12)"
  [ -e "$ROOT/.git" ] && PORTICO_INFO+=", repo HEAD at the run $(git -C "$ROOT" log -1 --format=%h 2>/dev/null)$(git -C "$ROOT" diff --quiet -- src 2>/dev/null || echo ' + uncommitted src changes')"
  cp "$PORTICO" "$RUN/portico" && PORTICO="$RUN/portico"
fi

# Descriptors: wrk -c1000, 10k idle connections, servers inheriting it.
ulimit -n "$(ulimit -Hn)" 2>/dev/null
NOFILE=$(ulimit -n)

STAMP=$(date -u +%Y%m%d-%H%M%S)
RAW="$HERE/results/raw/$STAMP"
mkdir -p "$RAW/logs"
CELLS="$RAW/cells.jsonl" COSTS="$RAW/cost.jsonl" MEMS="$RAW/memory.jsonl"
T0=$(date +%s)

for port in "$PORT" "$TLS_PORT" "$APP_PORT"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    die "127.0.0.1:$port is already in use (set BENCH_PORT / BENCH_TLS_PORT / BENCH_APP_PORT)"
  fi
done

version_of() {
  case "$1" in
    portico) [ -x "$PORTICO" ] && "$PORTICO" --version 2>&1 | head -1 ;;
    nginx) nginx -v 2>&1 | sed 's/^nginx version: //' ;;
    h2o) h2o --version 2>/dev/null | head -1 ;;
    haproxy) haproxy -v 2>/dev/null | head -1 | awk '{print "HAProxy " $3}' ;;
    node) echo "node $(node --version)" ;;
    express) [ -d "$HERE/express/node_modules/compression" ] &&
               (cd "$HERE/express" && node -p '"express " + require("express/package.json").version + ", compression " + require("compression/package.json").version') ;;
    nginx-brotli) [ -e "$NGINX_BROTLI" ] &&
                    dpkg-query -W -f '${Package} ${Version}' libnginx-mod-http-brotli-filter 2>/dev/null ;;
    wrk) wrk -v 2>&1 | head -1 | awk '{print $1, $2}' ;;
    h2load) h2load --version 2>/dev/null | head -1 | sed 's/ nghttp2\// /' ;;
    openssl) openssl version 2>/dev/null | awk '{print $1, $2}' ;;
    ab) ab -V 2>&1 | head -1 | sed 's/, Version \(.*\) <.*/ \1/;s/This is //' ;;
    valgrind) valgrind --version 2>/dev/null ;;
    strace) strace -V 2>/dev/null | head -1 | awk '{print "strace " $4}' ;;
  esac
}

write_machine() {
  local versions="" t
  for t in portico nginx nginx-brotli h2o haproxy node express wrk ab h2load openssl valgrind strace; do
    local v; v=$(version_of "$t" 2>/dev/null); [ -n "$v" ] && versions+="${versions:+, }$v"
  done
  local elapsed=$(( $(date +%s) - T0 ))
  MACHINE_NPROC=$(nproc) MACHINE_CPU="$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')" \
  MACHINE_MEM="$(awk '/MemTotal/ {printf "%.0f GiB RAM", $2/1048576}' /proc/meminfo)" \
  MACHINE_KERNEL="$(uname -r)" MACHINE_OS="$(. /etc/os-release; echo "$PRETTY_NAME")" \
  MACHINE_DATE="$(date -u '+%Y-%m-%d %H:%M UTC')" MACHINE_VERSIONS="$versions" \
  MACHINE_CMD="tests/bench/run.sh $ARGS_TEXT" MACHINE_PORTICO="$PORTICO_INFO" \
  MACHINE_SETTINGS="wrk -t1 ${DURATION}s, ab -n $AB_N, repeats $REPEAT, callgrind $CG_N req, strace $ST_N req, $MEM_CONNS idle conns, ulimit -n $NOFILE${SERVER_SCHED:+, servers under chrt --$SERVER_SCHED}; TLS: TLSv1.3 $TLS_SUITE $TLS_GROUP, $AB_N handshakes per handshake cell" \
  MACHINE_ELAPSED="$((elapsed / 60)) min $((elapsed % 60)) s" \
  python3 - "$RAW/machine.json" <<'EOF'
import json, os, sys
keys = ["nproc", "cpu", "mem", "kernel", "os", "date", "versions", "command", "settings", "elapsed",
        "portico"]
env = {"command": "MACHINE_CMD"}
json.dump({k: os.environ.get(env.get(k, "MACHINE_" + k.upper()), "") for k in keys},
          open(sys.argv[1], "w"), indent=1)
EOF
}

# --- the demo app --------------------------------------------------------------------
APP_PID=""
start_app() {
  PORT=$APP_PORT taskset -c $SERVER_CPU node "$ROOT/deploy/demo-app/server.js" >"$RAW/logs/app.log" 2>&1 &
  APP_PID=$!
  STARTED+=("$APP_PID")
  local i
  for ((i = 0; i < 100; i++)); do
    $PY check "$APP_PORT" /hello >/dev/null 2>&1 && return 0
    alive "$APP_PID" || break
    sleep 0.1
  done
  cat "$RAW/logs/app.log" >&2
  die "the demo app did not start"
}

# --- TLS: certificates and the load tools' settings -------------------------------------
TLS_DIR="$RUN/tls"
TLS_SUITE=TLS_AES_128_GCM_SHA256
TLS_GROUP=X25519
TLS_NA="not set up"  # why the TLS cells cannot run; empty once make_tls has run
# The load tools (wrk, ab, h2load, openssl s_client) read this instead of the
# system's openssl.cnf: TLS 1.3 only, one suite, one group.
CLIENT_TLS_ENV=(env "OPENSSL_CONF=$TLS_DIR/client.cnf")

# make_tls: a self-signed ECDSA P-256 CA and two leaves it signs, for
# localhost and 127.0.0.1: ecdsa (P-256) and rsa (2048 bits). KIND.pem, KIND.key
# and KIND.haproxy.pem (both in one file); no key leaves the run's temp dir.
make_tls() {
  local kind
  TLS_NA=""
  mkdir -p "$TLS_DIR" && chmod 700 "$TLS_DIR"
  command -v openssl >/dev/null || { TLS_NA="openssl missing"; return 1; }
  printf 'subjectAltName = DNS:localhost, IP:127.0.0.1\nbasicConstraints = CA:FALSE\nkeyUsage = digitalSignature, keyEncipherment\nextendedKeyUsage = serverAuth\n' \
    >"$TLS_DIR/leaf.ext"
  {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 90 \
      -subj "/CN=portico bench CA" -keyout "$TLS_DIR/ca.key" -out "$TLS_DIR/ca.pem" &&
    for kind in ecdsa rsa; do
      if [ "$kind" = ecdsa ]; then
        openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$TLS_DIR/$kind.key"
      else
        openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$TLS_DIR/$kind.key"
      fi &&
      openssl req -new -key "$TLS_DIR/$kind.key" -subj /CN=localhost -out "$TLS_DIR/$kind.csr" &&
      openssl x509 -req -in "$TLS_DIR/$kind.csr" -CA "$TLS_DIR/ca.pem" -CAkey "$TLS_DIR/ca.key" \
        -CAcreateserial -days 90 -sha256 -extfile "$TLS_DIR/leaf.ext" -out "$TLS_DIR/$kind.pem" &&
      cat "$TLS_DIR/$kind.pem" "$TLS_DIR/$kind.key" >"$TLS_DIR/$kind.haproxy.pem" || return 1
    done
  } >"$RAW/logs/tls-certs.log" 2>&1 || { TLS_NA="could not make certificates (logs/tls-certs.log)"; return 1; }
  printf '%s\n' "openssl_conf = bench_conf" "[bench_conf]" "ssl_conf = bench_ssl" "[bench_ssl]" \
    "system_default = bench_tls" "[bench_tls]" "MinProtocol = TLSv1.3" \
    "Ciphersuites = $TLS_SUITE" "Groups = $TLS_GROUP" >"$TLS_DIR/client.cnf"
}

# make_assets: the page's 20 files (printable pseudo-random text, so that no
# server could take a shortcut on repeated bytes) and h2load's list of URLs.
ASSETS="$RUN/assets"
PAGE_LIST="$RUN/page-urls.txt"
make_assets() {
  local i
  [ -e "$PAGE_LIST" ] && return 0
  mkdir -p "$ASSETS/asset"
  for ((i = 0; i < ${#PAGE_FILES[@]}; i++)); do
    head -c $((PAGE_KB[i] * 1024)) /dev/urandom | base64 -w 76 | head -c $((PAGE_KB[i] * 1024)) \
      >"$ASSETS${PAGE_FILES[$i]}"
    echo "https://127.0.0.1:$TLS_PORT${PAGE_FILES[$i]}" >>"$PAGE_LIST"
  done
}

# make_files: the large files of the static config, 1 MiB and 10 MiB of
# random bytes in ASSETS/files/ (served under /files/ by every static config),
# made at every run's start: the static and TLS configs name them.
make_files() {
  mkdir -p "$ASSETS/files"
  [ -e "$ASSETS/files/10m.bin" ] && return 0
  head -c $((1 << 20)) /dev/urandom >"$ASSETS/files/1m.bin"
  head -c $((10 << 20)) /dev/urandom >"$ASSETS/files/10m.bin"
}

# warm_n URL N: N scaled down for a large file (requests of the warm-ups and
# the cost runs), so each moves a bounded number of bytes: 1 MiB N/10, 10 MiB N/50.
warm_n() {
  case "$1" in
    /files/1m.bin) echo $(($2 / 10)) ;;
    /files/10m.bin) echo $(($2 / 50)) ;;
    *) echo "$2" ;;
  esac
}

# --- servers ---------------------------------------------------------------------------
SRV_PID="" SRV_NA="" SRV_PORT="" SRV_SCHEME=http SRV_NORESUME="" START_TAG=""
# start_server SERVER SCENARIO [valgrind-out-dir]: sets SRV_PID, SRV_PORT and
# SRV_SCHEME (the listener the cells load), or SRV_NA (the reason) and returns
# 1. A TLS scenario's server also gets the cleartext listener on PORT; its TLS
# listener on TLS_PORT must negotiate TLS 1.3, TLS_SUITE, TLS_GROUP with the
# scenario's certificate (else SRV_NA); SRV_NORESUME is set when it does not
# resume a session.
start_server() {
  local server=$1 scenario=$2 cgdir=${3:-} conf log wrap=() urls tags tls base ports check_tls=()
  SRV_PID="" SRV_NA="" SRV_PORT=$PORT SRV_SCHEME=http SRV_NORESUME=""
  tags=$(tags_of "$scenario")
  tls=$(tls_of "$scenario")
  base=$(config_of "$scenario")
  ports=$PORT
  if [ -n "$tls" ]; then
    [ -n "$TLS_NA" ] && { SRV_NA="TLS: $TLS_NA"; return 1; }
    SRV_PORT=$TLS_PORT SRV_SCHEME=https ports="$PORT $TLS_PORT"
    check_tls=(--tls "$TLS_DIR/ca.pem")
  fi
  log="$RAW/logs/$server-$scenario${cgdir:+-callgrind}.log"   # appended to at every start
  echo "=== $(date -u '+%H:%M:%S') start ${cgdir:+under callgrind }($START_TAG)" >>"$log"
  if [ "$server" = app ]; then
    SRV_PID=$APP_PID SRV_PORT=$APP_PORT
    return 0
  fi
  if [ -n "$cgdir" ]; then
    wrap=(valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$cgdir/callgrind.out.%p")
  elif [ -n "$SERVER_SCHED" ]; then
    wrap=(chrt "--$SERVER_SCHED" 0)
  fi
  local values=(PORT="$PORT" APP_PORT="$APP_PORT" WWW="$WWW" RUN="$RUN" TLS_PORT="$TLS_PORT"
                CERT="$TLS_DIR/$tls.pem" KEY="$TLS_DIR/$tls.key" CERTKEY="$TLS_DIR/$tls.haproxy.pem"
                ASSETS="$ASSETS" LEVEL="$(level_of "$scenario")")
  case "$server" in
    portico)
      [ -x "$PORTICO" ] || { SRV_NA="no portico binary"; return 1; }
      conf="$RUN/portico-$scenario.toml"
      $PY template "$HERE/conf/portico-$base.toml" "$conf" "$tags" "${values[@]}"
      "$PORTICO" -t -c "$conf" >"$RUN/t.log" 2>&1 || { SRV_NA="config rejected: $(head -1 "$RUN/t.log")"; return 1; }
      taskset -c $SERVER_CPU "${wrap[@]}" "$PORTICO" -c "$conf" >>"$log" 2>&1 &
      ;;
    nginx)
      command -v nginx >/dev/null || { SRV_NA="nginx not installed"; return 1; }
      conf="$RUN/nginx-$scenario.conf"
      mkdir -p "$RUN"/nginx-{body,proxy,fastcgi,uwsgi,scgi}
      $PY template "$HERE/conf/nginx.conf" "$conf" "$tags" "${values[@]}"
      nginx -t -q -p "$RUN/" -c "$conf" -g 'daemon off;' >"$RUN/t.log" 2>&1 ||
        { SRV_NA="config rejected: $(grep -m1 emerg "$RUN/t.log")"; return 1; }
      rm -f "$RUN/nginx.pid"
      taskset -c $SERVER_CPU "${wrap[@]}" nginx -p "$RUN/" -c "$conf" -g 'daemon off;' >>"$log" 2>&1 &
      ;;
    h2o)
      command -v h2o >/dev/null || { SRV_NA="h2o not installed"; return 1; }
      conf="$RUN/h2o-$scenario.conf"
      $PY template "$HERE/conf/h2o.conf" "$conf" "$tags" "${values[@]}"
      h2o -t -c "$conf" >"$RUN/t.log" 2>&1 || { SRV_NA="config rejected: $(tail -1 "$RUN/t.log")"; return 1; }
      taskset -c $SERVER_CPU "${wrap[@]}" h2o -c "$conf" >>"$log" 2>&1 &
      ;;
    haproxy)
      command -v haproxy >/dev/null || { SRV_NA="haproxy not installed"; return 1; }
      [ "$scenario" = static ] && { SRV_NA="serves no files"; return 1; }
      conf="$RUN/haproxy-$scenario.cfg"
      $PY template "$HERE/conf/haproxy.cfg" "$conf" "$tags" "${values[@]}"
      haproxy -c -q -f "$conf" >"$RUN/t.log" 2>&1 || { SRV_NA="config rejected: $(grep -m1 ALERT "$RUN/t.log")"; return 1; }
      taskset -c $SERVER_CPU "${wrap[@]}" haproxy -f "$conf" -db >>"$log" 2>&1 &
      ;;
    express)
      [ -d "$HERE/express/node_modules/compression" ] ||
        { SRV_NA="express and compression not installed (npm ci in tests/bench/express)"; return 1; }
      PORT=$PORT LEVEL=$(level_of "$scenario") ASSETS=$ASSETS \
        taskset -c $SERVER_CPU "${wrap[@]}" node "$HERE/express/server.js" >>"$log" 2>&1 &
      ;;
    *) SRV_NA="unknown server"; return 1 ;;
  esac
  SRV_PID=$!
  STARTED+=("$SRV_PID")
  urls=$(check_urls_of "$scenario" "$server")
  local i tries=100 port
  [ -n "$cgdir" ] && tries=600
  for ((i = 0; i < tries; i++)); do
    # shellcheck disable=SC2086
    if $PY check "${check_tls[@]}" "$SRV_PORT" $urls >"$RUN/check" 2>&1; then
      # Let the other processes (workers, helpers) finish starting.
      sleep 0.3
      # Portico and nginx use SO_REUSEPORT: another server left on the port
      # would silently take part of the connections.
      for port in $ports; do
        if ! $PY foreign-listeners "$port" "$SRV_PID" >"$RUN/foreign" 2>&1; then
          SRV_NA="another process listens on port $port: $(head -1 "$RUN/foreign")"
          stop_tree "$SRV_PID" TERM 10
          SRV_PID=""
          return 1
        fi
      done
      [ -n "$tls" ] && ! tls_probe "$server" "$scenario" "$tls" && return 1
      return 0
    fi
    alive "$SRV_PID" || break
    sleep 0.1
  done
  if alive "$SRV_PID"; then
    SRV_NA="not answering as expected: $(tr '\n' ' ' <"$RUN/check" | cut -c1-150)"
  else
    SRV_NA="exited: $(grep -v -e NOTICE -e '^$' -e '^===' "$log" | tail -1 | cut -c1-150)"
  fi
  stop_tree "$SRV_PID" KILL 2
  SRV_PID=""
  return 1
}

# tls_probe SERVER SCENARIO KIND: what the started server negotiates (to
# tls.jsonl); SRV_NA and return 1 unless TLS 1.3, TLS_SUITE, TLS_GROUP and
# KIND's signature; SRV_NORESUME when a second connection was not resumed.
tls_probe() {
  local out rc
  out=$("${CLIENT_TLS_ENV[@]}" $PY tls-probe "$SRV_PORT" "$TLS_DIR/ca.pem" /index.html "$3" \
        --out "$RAW/tls.jsonl" "server=$1" "scenario=$2" "start=$START_TAG" 2>&1)
  rc=$?
  $PY tls-line "$out"
  if [ $rc != 0 ]; then
    SRV_NA="TLS not as set: $($PY tls-line --problems "$out")"
    stop_tree "$SRV_PID" TERM 10
    SRV_PID=""
    return 1
  fi
  $PY tls-line --resumed "$out" || SRV_NORESUME=1
  return 0
}

stop_server() {
  [ -n "$SRV_PID" ] && [ "$SRV_PID" != "$APP_PID" ] && stop_tree "$SRV_PID" TERM "${1:-15}"
  SRV_PID=""
}

# --- one measured run --------------------------------------------------------------------
# run_cell SCENARIO SERVER LOAD URL REP: on the started server's listener
# (SRV_SCHEME, SRV_PORT). Over https the load tool runs with CLIENT_TLS_ENV.
# full-hs and resumed-hs make a new connection per request (AB_N of them):
# ab never offers a session (every handshake full); h2load, told
# "Connection: close", reconnects offering its previous connection's ticket.
# h2-m10, h2-m1 and page are HTTP/2 (h2load, ALPN h2; a cell that negotiated
# anything else counts as failed): -c100 for DURATION seconds with 10 or 1
# streams in flight per connection; page: one connection, AB_N requests over
# the 20 assets in turn, 20 in flight. h2load 1.52 sometimes ends a -D run
# badly once it stops its clients (a hang until the cell's timeout, or with
# -N a libev assertion): that repeat counts as failed and the others are used.
H2LOAD_TLS=(--tls13-ciphers="$TLS_SUITE" --groups="$TLS_GROUP")
run_cell() {
  local scenario=$1 server=$2 load=$3 url=$4 rep=$5 cmd tool connections pids c0 a0 s0 u0 env=() proto=()
  local base="$RAW/logs/$scenario-$server-$load-${url//\//_}-$rep"
  local target="$SRV_SCHEME://127.0.0.1:$SRV_PORT$url" limit=$((DURATION + 90))
  [ "$SRV_SCHEME" = https ] && env=("${CLIENT_TLS_ENV[@]}")
  case "$load" in
    wrk10) tool=wrk cmd=(wrk -t1 -c10 -d"${DURATION}s" --timeout 5s --latency "$target") ;;
    wrk100) tool=wrk cmd=(wrk -t1 -c100 -d"${DURATION}s" --timeout 5s --latency "$target") ;;
    wrk1000) tool=wrk cmd=(wrk -t1 -c1000 -d"${DURATION}s" --timeout 5s --latency "$target") ;;
    wrk*-gzip|wrk*-br) tool=wrk connections=${load%-*}
      cmd=(wrk -t1 -c"${connections#wrk}" -d"${DURATION}s" --timeout 5s --latency -H "Accept-Encoding: $(accept_of "$load")" "$target") ;;
    ab) tool=ab cmd=(ab -r -s 10 -n "$AB_N" -c 100 "$target") ;;
    full-hs) tool=ab limit=600 cmd=(ab -r -s 10 -n "$AB_N" -c 50 "$target") ;;
    resumed-hs) tool=h2load limit=600
      cmd=(h2load --h1 -n "$AB_N" -c 50 -H "Connection: close" "${H2LOAD_TLS[@]}" "$target") ;;
    h2-m10) tool=h2load proto=(--expect-proto h2)
      cmd=(h2load -c100 -m10 -D "$DURATION" "${H2LOAD_TLS[@]}" "$target") ;;
    h2-m1) tool=h2load proto=(--expect-proto h2)
      cmd=(h2load -c100 -m1 -D "$DURATION" "${H2LOAD_TLS[@]}" "$target") ;;
    page) tool=h2load limit=600 proto=(--expect-proto h2)
      cmd=(h2load -c1 -m20 -n "$AB_N" "${H2LOAD_TLS[@]}" -i "$PAGE_LIST") ;;
  esac
  read -r pids c0 a0 s0 u0 w0 < <($PY before "$SRV_PID" "$APP_PID")
  /usr/bin/time -f '%U %S %e' -o "$base.time" \
    timeout -k 5 "$limit" taskset -c $CLIENT_CPU "${env[@]}" "${cmd[@]}" >"$base.out" 2>"$base.err"
  printf '  %-10s %-8s %-10s %-11s #%s ' "$scenario" "$server" "$load" "$url" "$rep"
  $PY record --out "$CELLS" --scenario "$scenario" --server "$server" --load "$load" --url "$url" \
    --rep "$rep" --tool "$tool" --stdout "$base.out" --stderr "$base.err" --time "$base.time" \
    --pids "$pids" --app-pid "$APP_PID" --cpu0 "$c0" --app0 "$a0" --stat0 "$s0" --user0 "$u0" \
    --switches0 "$w0" "${proto[@]}"
  # The compress cells: one more request as the load tool sends it, its
  # bytes on the wire counted (head, body with its chunked framing).
  if [ "$(config_of "$scenario")" = compress ]; then
    $PY wire --out "$RAW/wire.jsonl" "$SRV_PORT" "$url" "$(accept_of "$load")" \
      "scenario=$scenario" "server=$server" "load=$load" "rep=$rep" >/dev/null 2>>"$RAW/logs/wire.log"
  fi
  sleep 0.5   # let the last connections close
}

# cell_na SCENARIO SERVER LOAD URL REASON: a cell that cannot run, for the report.
cell_na() {
  $PY na --out "$CELLS" --scenario "$1" --server "$2" --load "$3" --url "$4" --rep 0 --na "$5"
}

record_na() { # record_na SCENARIO SERVER REASON: all its cells
  local load url own
  while read -r load url own; do
    cell_na "$1" "$2" "$load" "$url" "${own:-$3}"
  done < <(cells_of "$1" "$2")
  echo "  $1 $2: n/a ($3)"
}

# Rounds are interleaved: each repeat runs every server once, and the
# servers' order rotates from one repeat to the next, so a machine that
# drifts during a run does not favour whoever always goes first.
throughput() {
  local rep scenario server url load cells cell na warm env servers i accept
  declare -A na_done=()
  for ((rep = 1; rep <= REPEAT; rep++)); do
    START_TAG="repeat $rep"
    for scenario in $SCENARIOS; do
      in_list "$scenario" "$F_SCENARIOS" || continue
      read -r -a servers <<<"$(servers_of "$scenario")"
      for ((i = 0; i < ${#servers[@]}; i++)); do
        server=${servers[$(((i + rep - 1) % ${#servers[@]}))]}
        in_list "$server" "$F_SERVERS" || continue
        mapfile -t cells < <(cells_of "$scenario" "$server")
        [ ${#cells[@]} -eq 0 ] && continue
        if ! start_server "$server" "$scenario"; then
          [ -z "${na_done[$scenario-$server]:-}" ] && record_na "$scenario" "$server" "$SRV_NA"
          na_done[$scenario-$server]=1
          continue
        fi
        env=()
        [ "$SRV_SCHEME" = https ] && env=("${CLIENT_TLS_ENV[@]}")
        warm=""
        for cell in "${cells[@]}"; do
          read -r load url na <<<"$cell"
          if [ -z "$na" ] && [ "$load" = resumed-hs ] && [ -n "$SRV_NORESUME" ]; then
            na="does not resume a session (openssl s_client -sess_in)"
          elif [ -z "$na" ] && { [ "$load" = resumed-hs ] || [ "$scenario" = h2 ]; } &&
               ! command -v h2load >/dev/null; then
            na="h2load missing"
          fi
          if [ -n "$na" ]; then
            [ "$rep" = 1 ] && cell_na "$scenario" "$server" "$load" "$url" "$na" &&
              printf '  %-10s %-8s %-10s %-11s n/a (%s)\n' "$scenario" "$server" "$load" "$url" "$na"
            continue
          fi
          if [ "$url" != "$warm" ] && [ "$scenario" = h2 ]; then
            # Warm-up over h2 (the page: each asset 50 times).
            if [ "$url" = "$PAGE_URL" ]; then
              taskset -c $CLIENT_CPU "${env[@]}" h2load -c1 -m20 -n 1000 "${H2LOAD_TLS[@]}" \
                -i "$PAGE_LIST" >/dev/null 2>&1
            else
              taskset -c $CLIENT_CPU "${env[@]}" h2load -c50 -m10 -n 2000 "${H2LOAD_TLS[@]}" \
                "$SRV_SCHEME://127.0.0.1:$SRV_PORT$url" >/dev/null 2>&1
            fi
            warm=$url
          elif [ "$url $(accept_of "$load")" != "$warm" ]; then
            # Warm-up: file caches, upstream pools, the app's JIT; with the
            # load's Accept-Encoding (the compressed cache, the encoders).
            accept=$(accept_of "$load")
            taskset -c $CLIENT_CPU "${env[@]}" ab -k -r -s 10 -n "$(warm_n "$url" 1000)" -c 50 \
              ${accept:+-H "Accept-Encoding: $accept"} \
              "$SRV_SCHEME://127.0.0.1:$SRV_PORT$url" >/dev/null 2>&1
            warm="$url $accept"
          fi
          run_cell "$scenario" "$server" "$load" "$url" "$rep"
        done
        stop_server
      done
    done
  done
}

# --- deterministic cost: callgrind and strace ---------------------------------------------
# Cases: CONFIG:URL. The static config answers /index.html and /image.jpg from
# disk and proxies /hello; the proxy config proxies /image.jpg (100 KiB from the app).
# The large files (static) are measured on fewer requests (warm_n).
COST_CASES="static:/index.html static:/image.jpg static:/hello proxy:/image.jpg"
COST_CASES+=" static:/files/1m.bin static:/files/10m.bin"
cost_urls_of() { # the URLs measured on one config (also its warm-up set); --url selects
  local c
  for c in $COST_CASES; do [ "${c%%:*}" = "$1" ] && in_list "${c#*:}" "$F_URLS" && echo "${c#*:}"; done
}

# callgrind_run SERVER SCENARIO DIR [URL]: the scenario's config under callgrind;
# warm-up on each of its cost URLs, then (with URL) ab -k -n CG_N on it; sets
# CG_TOTAL to the Ir sum of all the server's processes (returns 1 and leaves it
# empty on failure).
CG_TOTAL=""
callgrind_run() {
  local server=$1 scenario=$2 dir=$3 url=${4:-} u
  CG_TOTAL=""
  mkdir -p "$dir"
  start_server "$server" "$scenario" "$dir" || { echo "callgrind: $SRV_NA" >&2; return 1; }
  for u in $(cost_urls_of "$scenario"); do
    timeout 300 taskset -c $CLIENT_CPU ab -k -r -s 60 -n "$(warm_n "$u" "$CG_WARM")" -c 10 "http://127.0.0.1:$PORT$u" >/dev/null 2>&1
  done
  if [ -n "$url" ]; then
    local n; n=$(warm_n "$url" "$CG_N")
    timeout 900 taskset -c $CLIENT_CPU ab -k -r -s 60 -n "$n" -c 10 "http://127.0.0.1:$PORT$url" \
      >"$dir/ab.out" 2>&1
    grep -q "^Complete requests: *$n\$" "$dir/ab.out" || { echo "callgrind: ab did not complete" >&2; stop_server 120; return 1; }
    grep -q "^Failed requests: *0" "$dir/ab.out" || echo "callgrind: $(grep '^Failed' "$dir/ab.out")" >&2
  fi
  stop_server 120
  compgen -G "$dir/callgrind.out.*" >/dev/null || { echo "callgrind: no output" >&2; return 1; }
  CG_TOTAL=$($PY callgrind-total "$dir"/callgrind.out.*)
  [ -n "$CG_TOTAL" ]
}

# Cases over TLS: the h2 scenario's config (h2 by ALPN) loaded by h2load -c10
# -m10, and the tls scenario's (HTTP/1.1: ab offers no ALPN) by ab -k -c10,
# the cleartext cases' load over TLS. Ten TLS handshakes come with every such
# run: the instructions are those of a run with CG_N+10 requests minus a run
# with 10 (one per connection, the same handshakes, probes and warm-up), over
# CG_N.
COST_TLS_SCENARIOS="h2 tls"
COST_TLS_URLS="/index.html /hello"
cost_tls_wanted() { # cost_tls_wanted SCENARIO: --scenario names it (or no list), and --url leaves one of COST_TLS_URLS
  local u
  in_list "$1" "$F_SCENARIOS" || return 1
  for u in $COST_TLS_URLS; do in_list "$u" "$F_URLS" && return 0; done
  return 1
}
cost_h1_wanted() { # the cleartext HTTP/1.1 cases: unless --scenario names only cases over TLS
  local s
  [ -z "$F_SCENARIOS" ] && return 0
  for s in ${F_SCENARIOS//,/ }; do in_list "$s" "${COST_TLS_SCENARIOS// /,}" || return 0; done
  return 1
}

# h2load_ok FILE N: h2load completed N requests, all 2xx, over h2.
h2load_ok() {
  grep -q "^requests: $2 total, $2 started, $2 done, $2 succeeded" "$1" &&
    grep -q "^status codes: $2 2xx" "$1" && grep -q '^Application protocol: h2$' "$1"
}

# tls_load SCENARIO URL N OUT: N requests on URL over TLS, 10 connections:
# h2load -c10 -m10 (h2) or ab -k -c10 (tls); returns 1 unless all N completed
# (over h2 for h2; with a 2xx for h2load).
tls_load() {
  local scenario=$1 url=$2 n=$3 out=$4
  if [ "$scenario" = h2 ]; then
    timeout 900 taskset -c $CLIENT_CPU "${CLIENT_TLS_ENV[@]}" h2load -c10 -m10 -n "$n" "${H2LOAD_TLS[@]}" \
      "https://127.0.0.1:$TLS_PORT$url" >"$out" 2>&1
    h2load_ok "$out" "$n"
  else
    timeout 900 taskset -c $CLIENT_CPU "${CLIENT_TLS_ENV[@]}" ab -k -r -s 60 -n "$n" -c 10 \
      "https://127.0.0.1:$TLS_PORT$url" >"$out" 2>&1
    grep -q "^Complete requests: *$n\$" "$out"
  fi
}

# callgrind_tls_run SERVER SCENARIO DIR URL N: the h2 or tls config under
# callgrind, the static config's warm-up (HTTP/1.1 on the cleartext listener),
# then tls_load; sets CG_TOTAL like callgrind_run.
callgrind_tls_run() {
  local server=$1 scenario=$2 dir=$3 url=$4 n=$5 u ok=0
  CG_TOTAL=""
  mkdir -p "$dir"
  start_server "$server" "$scenario" "$dir" || { echo "callgrind: $SRV_NA" >&2; return 1; }
  for u in $(cost_urls_of static); do
    timeout 300 taskset -c $CLIENT_CPU ab -k -r -s 60 -n "$(warm_n "$u" "$CG_WARM")" -c 10 "http://127.0.0.1:$PORT$u" >/dev/null 2>&1
  done
  tls_load "$scenario" "$url" "$n" "$dir/load.out" && ok=1
  stop_server 120
  [ "$ok" = 1 ] ||
    { echo "callgrind: $scenario -n $n $url did not complete: $(grep -m1 -E '^(requests|Complete requests):' "$dir/load.out")" >&2; return 1; }
  compgen -G "$dir/callgrind.out.*" >/dev/null || { echo "callgrind: no output" >&2; return 1; }
  CG_TOTAL=$($PY callgrind-total "$dir"/callgrind.out.*)
  [ -n "$CG_TOTAL" ]
}

# strace_run URL FILE [h2|tls]: syscalls of all the server's processes and
# threads during ab -k -n N (ST_N, or fewer for a large file: warm_n), or
# tls_load's ST_N requests over TLS (server already started).
strace_run() {
  local url=$1 file=$2 mode=${3:-} pids p args=() spid i n
  n=$(warm_n "$url" "$ST_N")
  pids=$($PY tree "$SRV_PID")
  for p in $pids; do
    # h2o's crash-handler helper (perl) is not part of serving.
    grep -q annotate-backtrace "/proc/$p/cmdline" 2>/dev/null && continue
    args+=(-p "$p")
  done
  strace -f -c -o "$file" "${args[@]}" 2>"$file.err" &
  spid=$!
  STARTED+=("$spid")
  sleep 1
  local done_ok=0
  if [ -n "$mode" ]; then
    tls_load "$mode" "$url" "$ST_N" "$file.load" && done_ok=1
  else
    timeout 300 taskset -c $CLIENT_CPU ab -k -r -s 30 -n "$n" -c 10 "http://127.0.0.1:$PORT$url" >"$file.ab" 2>&1
    grep -q "^Complete requests: *$n\$" "$file.ab" && done_ok=1
  fi
  kill -INT "$spid" 2>/dev/null
  for ((i = 0; i < 100; i++)); do alive "$spid" || break; sleep 0.1; done
  stop_tree "$spid" KILL 1
  forget "$spid"
  [ "$done_ok" = 1 ]
}

cost() {
  local server scenario url case key dir tag cases base tool
  command -v valgrind >/dev/null || echo "valgrind missing: no instruction counts" >&2
  command -v strace >/dev/null || echo "strace missing: no system call counts" >&2
  for server in portico nginx h2o; do
    in_list "$server" "$F_SERVERS" || continue
    echo "  cost: $server"
    START_TAG="cost"
    declare -A idle_of=() loaded_of=() ina_of=() sfile_of=() sna_of=()
    cases=""
    if cost_h1_wanted; then
      for case in $COST_CASES; do in_list "${case#*:}" "$F_URLS" && cases+=" $case"; done
    fi
    for scenario in static proxy; do
      cost_h1_wanted || continue
      [ -n "$(cost_urls_of "$scenario")" ] || continue
      # callgrind: an idle run (warm-up only), then one run per URL.
      if ! command -v valgrind >/dev/null; then
        for url in $(cost_urls_of "$scenario"); do ina_of[$scenario:$url]="valgrind missing"; done
      elif ! callgrind_run "$server" "$scenario" "$RUN/cg-$server-$scenario-idle" 2>>"$RAW/logs/cost.log"; then
        for url in $(cost_urls_of "$scenario"); do ina_of[$scenario:$url]="idle run failed, see logs/cost.log"; done
      else
        idle_of[$scenario]=$CG_TOTAL
        for url in $(cost_urls_of "$scenario"); do
          tag="$server-$scenario-${url//\//_}"
          dir="$RUN/cg-$tag"
          if callgrind_run "$server" "$scenario" "$dir" "$url" 2>>"$RAW/logs/cost.log"; then
            loaded_of[$scenario:$url]=$CG_TOTAL
          else
            ina_of[$scenario:$url]="run failed, see logs/cost.log"
          fi
          for f in "$dir"/callgrind.out.*; do
            [ -e "$f" ] && cp "$f" "$RAW/logs/callgrind-$tag.${f##*.}"
          done
        done
      fi
      # strace: the server as it normally runs.
      if command -v strace >/dev/null && start_server "$server" "$scenario"; then
        for url in $(cost_urls_of "$scenario"); do
          taskset -c $CLIENT_CPU ab -k -r -s 10 -n "$(warm_n "$url" 2000)" -c 10 "http://127.0.0.1:$PORT$url" >/dev/null 2>&1
          sfile_of[$scenario:$url]="$RAW/logs/strace-$server-$scenario-${url//\//_}.txt"
          strace_run "$url" "${sfile_of[$scenario:$url]}" ||
            sna_of[$scenario:$url]="ab did not complete under strace"
        done
        stop_server
      else
        for url in $(cost_urls_of "$scenario"); do sna_of[$scenario:$url]=${SRV_NA:-strace missing}; done
      fi
    done
    for scenario in $COST_TLS_SCENARIOS; do
      cost_tls_wanted "$scenario" || continue
      tool=ab; [ "$scenario" = h2 ] && tool=h2load
      for url in $COST_TLS_URLS; do
        in_list "$url" "$F_URLS" || continue
        key="$scenario:$url" tag="$server-$scenario-${url//\//_}"
        cases+=" $key"
        if [ -n "$TLS_NA" ]; then
          ina_of[$key]="TLS: $TLS_NA"
        elif ! command -v valgrind >/dev/null; then
          ina_of[$key]="valgrind missing"
        elif ! callgrind_tls_run "$server" "$scenario" "$RUN/cg-$tag-base" "$url" 10 2>>"$RAW/logs/cost.log"; then
          ina_of[$key]="baseline run failed, see logs/cost.log"
        else
          base=$CG_TOTAL
          if callgrind_tls_run "$server" "$scenario" "$RUN/cg-$tag" "$url" $((CG_N + 10)) 2>>"$RAW/logs/cost.log"; then
            idle_of[$key]=$base loaded_of[$key]=$CG_TOTAL
          else
            ina_of[$key]="run failed, see logs/cost.log"
          fi
          for f in "$RUN/cg-$tag"/callgrind.out.* "$RUN/cg-$tag-base"/callgrind.out.*; do
            [ -e "$f" ] || continue
            [[ $f == *-base/* ]] && cp "$f" "$RAW/logs/callgrind-$tag-base.${f##*.}" || cp "$f" "$RAW/logs/callgrind-$tag.${f##*.}"
          done
        fi
      done
      if [ -z "$TLS_NA" ] && command -v strace >/dev/null && start_server "$server" "$scenario"; then
        for url in $COST_TLS_URLS; do
          in_list "$url" "$F_URLS" || continue
          tls_load "$scenario" "$url" 2000 /dev/null
          sfile_of[$scenario:$url]="$RAW/logs/strace-$server-$scenario-${url//\//_}.txt"
          strace_run "$url" "${sfile_of[$scenario:$url]}" "$scenario" ||
            sna_of[$scenario:$url]="$tool did not complete under strace"
        done
        stop_server
      else
        for url in $COST_TLS_URLS; do sna_of[$scenario:$url]=${SRV_NA:-${TLS_NA:-strace missing}}; done
      fi
    done
    for case in $cases; do
      scenario=${case%%:*} url=${case#*:} key=$case
      $PY cost-row "$COSTS" "$server" "$url" "$(warm_n "$url" "$CG_N")" "${loaded_of[$key]:-}" "${idle_of[$key]:-${idle_of[$scenario]:-}}" \
        "${sfile_of[$key]:-}" "$(warm_n "$url" "$ST_N")" "${ina_of[$key]:-}" "${sna_of[$key]:-}" "$scenario" | sed 's/^/    /'
    done
    unset idle_of loaded_of ina_of sfile_of sna_of
  done
}

# --- memory per idle connection --------------------------------------------------------------
memory() {
  local server before after held failed line cpid
  START_TAG="memory"
  for server in portico nginx h2o; do
    in_list "$server" "$F_SERVERS" || continue
    if ! start_server "$server" static; then
      $PY mem-na "$MEMS" "$server" "$SRV_NA"; continue
    fi
    taskset -c $CLIENT_CPU ab -k -r -n 2000 -c 10 "http://127.0.0.1:$PORT/index.html" >/dev/null 2>&1
    sleep 1
    # shellcheck disable=SC2046
    read -r _ before < <($PY mem $($PY tree "$SRV_PID"))
    coproc CONNS { exec taskset -c $CLIENT_CPU python3 "$HERE/lib/bench.py" conns "$PORT" "$MEM_CONNS" /index.html \
                     127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4 2>"$RAW/logs/conns-$server.err"; }
    cpid=$CONNS_PID
    STARTED+=("$cpid")
    line=""
    read -r -t 120 -u "${CONNS[0]}" line
    sleep 1
    # shellcheck disable=SC2046
    read -r _ after < <($PY mem $($PY tree "$SRV_PID"))
    read -r _ held failed <<<"${line:-ready 0 $MEM_CONNS}"
    { printf 'done\n' 1>&"${CONNS[1]}"; } 2>/dev/null
    for ((i = 0; i < 100; i++)); do alive "$cpid" || break; sleep 0.1; done
    stop_tree "$cpid" TERM 2
    forget "$cpid"
    printf '  memory %-8s ' "$server"
    if [ "${held:-0}" -gt 0 ]; then
      $PY mem-row "$MEMS" "$server" "$held" "$failed" "$before" "$after"
    else
      $PY mem-na "$MEMS" "$server" "no connection held ($(head -1 "$RAW/logs/conns-$server.err"))"
      echo "no connection held"
    fi
    stop_server
  done
}

# --- run ------------------------------------------------------------------------------------------
echo "raw results and logs: $RAW"
start_app
need_tls=0
if want_part throughput; then
  for scenario in $SCENARIOS; do
    in_list "$scenario" "$F_SCENARIOS" && [ -n "$(tls_of "$scenario")" ] && need_tls=1
  done
fi
if want_part cost; then
  for scenario in $COST_TLS_SCENARIOS; do cost_tls_wanted "$scenario" && need_tls=1; done
fi
if [ "$need_tls" = 1 ]; then
  make_tls || echo "TLS cells n/a: $TLS_NA" >&2
  make_assets
fi
want_part throughput && compress_wanted && make_compress_assets
make_files
if want_part throughput; then echo "throughput (repeats $REPEAT, wrk ${DURATION}s, ab -n $AB_N):"; throughput; fi
if want_part cost; then echo "cost (callgrind $CG_N requests, strace $ST_N requests):"; cost; fi
if want_part memory; then echo "memory ($MEM_CONNS idle connections):"; memory; fi
write_machine
title="portico benchmark"
[ "$OUT" != "$HERE/results/latest.md" ] && title="portico benchmark (partial: $ARGS_TEXT)"
echo
$PY render --dir "$RAW" --out "$OUT" --title "$title"
echo "report: $OUT"
exit 0
}
