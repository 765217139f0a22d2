#!/usr/bin/env bash
# Configures and builds one build folder:
#   deploy/build.sh [DIR [CMAKE ARGS...]]      (TARGET=portico builds only the server)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
fi
cmake --build "$dir" ${TARGET:+--target "$TARGET"} -- -j"$(nproc)"
