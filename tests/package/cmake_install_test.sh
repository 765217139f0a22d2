#!/usr/bin/env bash
# `cmake --install` into a temporary prefix: the binary in sbin, the default
# config in etc/portico with its paths made absolute for that prefix (its
# root must exist: `portico -t` checks it), the static files and the docs
# in share, the unit naming the installed binary and config.
#   tests/package/cmake_install_test.sh BUILD_DIR
set -euo pipefail
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
trap 'echo "failed at line $LINENO: $BASH_COMMAND"' ERR
cmake --install "$build" --prefix "$prefix" >/dev/null
test -x "$prefix/sbin/portico"
test -f "$prefix/share/portico/www/index.html"
test -f "$prefix/share/doc/portico/README.md"
for doc in configuration operations benchmarks architecture testing; do
  test -f "$prefix/share/doc/portico/docs/$doc.md"
done
test -f "$prefix/etc/logrotate.d/portico"
config=$prefix/etc/portico/portico.toml
grep -q "^root = \"$prefix/share/portico/www\"$" "$config"
grep -q '^access = "/var/log/portico/access.log"$' "$config"
"$prefix/sbin/portico" -t -c "$config"
unit=$prefix/lib/systemd/system/portico.service
grep -q "^ExecStart=$prefix/sbin/portico -c $config$" "$unit"
echo "cmake --install: every file in place"
