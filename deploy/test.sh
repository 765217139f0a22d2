#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite twice: a
# normal build, then one with AddressSanitizer + UndefinedBehaviorSanitizer.
# Any sanitizer report, in any process (workers too), fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh --test

echo "== normal build" >&2
deploy/build.sh build
(cd build && ctest -j2 --output-on-failure)

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build" >&2
deploy/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DPORTICO_SANITIZE=ON
reports="$PWD/build-asan/sanitizer-reports"
rm -rf "$reports" && mkdir -p "$reports"
# Reports go to files because a worker's stderr is the test's log file,
# which the test deletes; the check below reads them all.
export ASAN_OPTIONS="log_path=$reports/asan:abort_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1"
(cd build-asan && ctest -j2 --output-on-failure)
if compgen -G "$reports/*" >/dev/null; then
  echo "sanitizer reports:" >&2
  cat "$reports"/* >&2
  exit 1
fi
echo "no sanitizer reports" >&2
