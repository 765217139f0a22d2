#!/usr/bin/env bash
# Installs what is missing, builds, and runs portico in the foreground on
# conf/portico.toml (or the config given as $1). Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
deploy/build.sh build
config=${1:-conf/portico.toml}
echo "portico on $config: http://127.0.0.1:8080/ (Ctrl-C to stop)" >&2
exec build/portico -c "$config"
