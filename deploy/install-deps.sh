#!/usr/bin/env bash
# Installs what portico needs to build and run, from Debian's packages only;
# with --test also what the test suite uses. Idempotent and quiet: does
# nothing when everything is already there.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libuv1-dev          # the event loop, one per worker
  node-llhttp         # the HTTP/1.x parser (C sources, built as a static library)
  libtomlplusplus-dev # the config file
  libspdlog-dev       # error and access logs
  libre2-dev          # regex locations, linear time
  nlohmann-json3-dev  # `portico stats` reads /stats; JSON access log tests parse lines
  catch2              # unit and integration tests (v2)
  curl                # handy checks by hand
)
# The demo app needs Node.js; any recent one on the PATH will do.
command -v node >/dev/null 2>&1 || packages+=(nodejs)
if [ "${1:-}" = "--test" ]; then
  packages+=(prometheus)  # promtool checks /metrics in the counters tests
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
sudo_if_needed apt-get update -qq
sudo_if_needed apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
