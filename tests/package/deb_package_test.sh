#!/usr/bin/env bash
# The .deb from end to end, as an operator would meet it: built with cpack,
# installed with apt-get, its config checked with `portico -t`, the
# installed binary run on a copy of the installed config (free ports, no
# systemd needed), a file fetched, the logs rotated by the installed
# logrotate file (logrotate -f) and reopened on SIGUSR1, then the package
# removed and purged. It changes the machine's packages, so whatever
# happens the package is purged on the way out.
#   tests/package/deb_package_test.sh BUILD_DIR
# Exits 77 (ctest: skipped) when not root, or when a portico package is
# already installed here: that one is somebody's, not the test's to replace.
set -euo pipefail
build=$(realpath "$1")

if [ "$(id -u)" -ne 0 ]; then
  echo "skipped: installing a package needs root"
  exit 77
fi
# Build folders run this in parallel (ctest -j2, several work trees): the
# package is machine-wide, so one at a time.
exec 9>/tmp/portico-package-test.lock
flock --wait 300 9
if dpkg-query -W -f='${Status}' portico 2>/dev/null | grep -q "install ok installed"; then
  echo "skipped: a portico package is already installed on this machine"
  exit 77
fi

work=$(mktemp -d)
portico_pid=
apt_get() {
  DEBIAN_FRONTEND=noninteractive apt-get -y -qq -o DPkg::Lock::Timeout=120 "$@" \
    >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; return 1; }
}
cleanup() {
  # The master by pid; its workers follow it (parent-death signal).
  if [ -n "$portico_pid" ]; then kill -KILL "$portico_pid" 2>/dev/null || true; fi
  DEBIAN_FRONTEND=noninteractive apt-get -y -qq -o DPkg::Lock::Timeout=120 purge portico \
    >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "failed at line $LINENO: $BASH_COMMAND"' ERR
step() { echo "== $*"; }
# wait_for TENTHS COMMAND...: runs COMMAND every 100 ms until it succeeds.
wait_for() {
  local tries=$1
  shift
  until "$@"; do
    tries=$((tries - 1))
    if [ "$tries" -le 0 ]; then echo "timed out waiting for: $*"; return 1; fi
    sleep 0.1
  done
}

step "cpack"
cpack --config "$build/CPackConfig.cmake" -B "$work/package" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; exit 1; }
deb=$(echo "$work"/package/portico_*.deb)
dpkg-deb --field "$deb" Depends

step "apt-get install $(basename "$deb")"
apt_get install "$deb"
test -x /usr/sbin/portico
test -f /usr/share/portico/www/index.html
test -f /usr/share/doc/portico/README.md
test -f /usr/share/doc/portico/docs/configuration.md
test -f /usr/share/doc/portico/docs/operations.md
test -f /usr/lib/systemd/system/portico.service
getent passwd portico >/dev/null
dpkg-query -W -f='${Conffiles}\n' portico | grep -q '^ /etc/portico/portico.toml '
dpkg-query -W -f='${Conffiles}\n' portico | grep -q '^ /etc/logrotate.d/portico '

step "portico -t -c /etc/portico/portico.toml"
/usr/sbin/portico -t -c /etc/portico/portico.toml

step "the installed binary on a copy of the installed config, ports changed to free ones"
sed -e 's/127\.0\.0\.1:8080/127.0.0.1:0/' -e 's/127\.0\.0\.1:9145/127.0.0.1:0/' \
  /etc/portico/portico.toml >"$work/portico.toml"
/usr/sbin/portico -c "$work/portico.toml" >"$work/stderr" 2>&1 &
portico_pid=$!
error_log=/var/log/portico/error.log
access_log=/var/log/portico/access.log
port_logged() { grep -q 'listening on 127.0.0.1:0 (port [0-9]*)' "$error_log" 2>/dev/null; }
wait_for 100 port_logged || { cat "$work/stderr"; exit 1; }
port=$(sed -n 's/.*listening on 127\.0\.0\.1:0 (port \([0-9]*\)).*/\1/p' "$error_log" | head -1)
curl --silent --fail --max-time 10 "http://127.0.0.1:$port/index.html" -o "$work/index.html"
cmp "$work/index.html" /usr/share/portico/www/index.html

step "logrotate -f /etc/logrotate.d/portico, then SIGUSR1 (its postrotate, without systemd)"
# The access log is flushed at least once a second.
wait_for 50 test -s "$access_log"
logrotate --force --state "$work/logrotate.state" /etc/logrotate.d/portico
test -s "$access_log.1"
test "$(stat -c '%U:%G %a' "$access_log")" = "portico:adm 640"
kill -USR1 "$portico_pid"
reopened() { grep -q 'master: log files reopened' "$error_log" 2>/dev/null; }
wait_for 50 reopened
curl --silent --fail --max-time 10 "http://127.0.0.1:$port/style.css" -o /dev/null
has_style_line() { grep -q '"GET /style.css ' "$access_log"; }
wait_for 50 has_style_line
if grep -q '"GET /style.css ' "$access_log.1"; then
  echo "a line written after the reopen went to the rotated file"
  exit 1
fi

step "SIGTERM"
kill -TERM "$portico_pid"
status=0
wait "$portico_pid" || status=$?
portico_pid=
test "$status" -eq 0

step "apt-get remove"
apt_get remove portico
test ! -e /usr/sbin/portico
test -f /etc/portico/portico.toml  # a conffile stays until purge

step "apt-get purge"
apt_get purge portico
test ! -e /etc/portico
test ! -e /var/log/portico
test ! -e /etc/systemd/system/multi-user.target.wants/portico.service
echo "the .deb installed, served, rotated its logs, and was removed cleanly"
