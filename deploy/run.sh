#!/usr/bin/env bash
# Installs what is missing, builds, starts the demo app (deploy/demo-app) on
# 127.0.0.1:3000 and portico in front of it on conf/portico.toml (or the
# config given as $1, e.g. conf/proxy-only.toml). Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
TARGET=portico deploy/build.sh build
config=${1:-conf/portico.toml}

PORT=3000 node deploy/demo-app/server.js &
app=$!
build/portico -c "$config" &
portico=$!
# Stop both by pid, whichever way this script ends.
trap 'kill -TERM $portico $app 2>/dev/null; wait $portico $app 2>/dev/null' EXIT INT TERM

cat >&2 <<URLS

  portico ($config) in front of the demo app:
    http://127.0.0.1:8080/             proxied to the app
    http://127.0.0.1:8080/index.html   from www/ on disk (conf/portico.toml)
    http://127.0.0.1:8080/image.jpg    from disk, or from the app with proxy-only.toml
    http://127.0.0.1:8080/hello        proxied
    ws://127.0.0.1:8080/ws             WebSocket echo through the proxy
  the app itself: http://127.0.0.1:3000/      Ctrl-C stops both

URLS
wait -n $portico $app
