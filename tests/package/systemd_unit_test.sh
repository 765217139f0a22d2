#!/usr/bin/env bash
# systemd-analyze verify on deploy/systemd/portico.service, with ExecStart
# and friends pointed at the built binary (verify checks that each command
# exists), so it runs on a build machine without the package and without
# systemd as PID 1. Any message naming the unit fails the test: verify exits
# 0 on an unknown key ("ignoring") and only prints it.
#   tests/package/systemd_unit_test.sh SOURCE_DIR PORTICO_BINARY
set -euo pipefail
source_dir=$1
binary=$2
if ! command -v systemd-analyze >/dev/null; then
  echo "skipped: systemd-analyze is not installed (deploy/install-deps.sh --test installs it)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed "s#/usr/sbin/portico#$binary#g" "$source_dir/deploy/systemd/portico.service" \
  >"$work/portico.service"
grep -q "^ExecStart=$binary " "$work/portico.service"
status=0
systemd-analyze verify "$work/portico.service" >"$work/out" 2>&1 || status=$?
cat "$work/out"
test "$status" -eq 0
if grep -q "portico.service" "$work/out"; then
  echo "systemd-analyze has something to say about the unit"
  exit 1
fi
echo "systemd-analyze verify: the unit is clean"
