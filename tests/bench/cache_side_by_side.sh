#!/usr/bin/env bash
# Issue 37's response cache benchmark, CPU part: portico's cache hits side by
# side with nginx's proxy_cache (tmpfs) and Varnish's -s malloc, one server
# loaded at a time (--apart), for the demo page `/` and the 100 KiB
# /image.jpg at wrk -c100 and -c1000; then portico's hit of `/` against its
# own static /index.html of the same bytes. Every line goes to OUT (default
# /tmp/cache-side-by-side.txt); results/cache-side-by-side.md quotes a run.
#
#   tests/bench/cache_side_by_side.sh [ROUNDS [SECONDS [OUT]]]   (5 rounds of 5 s: ~12 min)
#
# PORTICO_BIN picks the binary (default build/portico). The instructions per
# hit (callgrind) are cache_cost.sh's.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROUNDS=${1:-5}
SECONDS_PER_LOAD=${2:-5}
OUT=${3:-/tmp/cache-side-by-side.txt}
command -v varnishd >/dev/null || { echo "varnishd missing: apt-get install varnish" >&2; exit 2; }
: >"$OUT"
cell() { # cell ARGS...: one side_by_side.py run, its command and output into OUT
  echo "\$ side_by_side.py $*" | tee -a "$OUT"
  python3 "$HERE/side_by_side.py" --scenario cache --apart --rounds "$ROUNDS" --seconds "$SECONDS_PER_LOAD" "$@" 2>&1 |
    tee -a "$OUT"
  echo | tee -a "$OUT"
}
date -u '+started %Y-%m-%d %H:%M:%S UTC' | tee -a "$OUT"
for other in nginx varnish; do
  for url in / /image.jpg; do
    for load in wrk100 wrk1000; do
      cell --url "$url" --load "$load" portico "$other"
    done
  done
done
for load in wrk100 wrk1000; do
  cell --url / --url-b /index.html --load "$load" portico portico
done
date -u '+ended %Y-%m-%d %H:%M:%S UTC' | tee -a "$OUT"
