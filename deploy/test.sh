#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite three
# times: a normal build, a Release (-O3) build, then one with AddressSanitizer
# + UndefinedBehaviorSanitizer. Any sanitizer report, in any process (workers
# too), fails the run. Warnings are errors here (PORTICO_WERROR), never in a
# user's own build.
#
# CI builds in unity mode (CMAKE_UNITY_BUILD: eight sources per compiler
# run): each file's own code compiles in seconds, but the headers it includes
# (spdlog's fmt, Catch, toml++) take 5-10 s per file, and unity mode pays
# them once per eight. It halves each build here; it also keeps the code free
# of file-local names that clash when files are compiled together.
#
# Tests whose result does not depend on how portico was compiled (labels in
# tests/CMakeLists.txt) run once: build-independent (deploy files, packages,
# the dashboard in a browser) in the first build only, tls-scan (testssl.sh)
# in the first and the sanitizer build. Each phase prints its start time.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh --test

echo "== normal build, $(date -u +%T)" >&2
deploy/build.sh build -DPORTICO_WERROR=ON -DCMAKE_UNITY_BUILD=ON
(cd build && ctest -j2 --output-on-failure)

echo "== Release build (-O3), $(date -u +%T)" >&2
deploy/build.sh build-release -DCMAKE_BUILD_TYPE=Release -DPORTICO_WERROR=ON -DPORTICO_SOAK=OFF \
  -DCMAKE_UNITY_BUILD=ON
(cd build-release && ctest -j2 --output-on-failure -LE 'build-independent|tls-scan')

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build, $(date -u +%T)" >&2
deploy/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DPORTICO_SANITIZE=ON -DPORTICO_WERROR=ON \
  -DPORTICO_SOAK=OFF -DCMAKE_UNITY_BUILD=ON
reports="$PWD/build-asan/sanitizer-reports"
rm -rf "$reports" && mkdir -p "$reports"
# Reports go to files because a worker's stderr is the test's log file,
# which the test deletes; the check below reads them all.
export ASAN_OPTIONS="log_path=$reports/asan:abort_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1"
(cd build-asan && ctest -j2 --output-on-failure -LE build-independent)
if compgen -G "$reports/*" >/dev/null; then
  echo "sanitizer reports:" >&2
  cat "$reports"/* >&2
  exit 1
fi
echo "no sanitizer reports" >&2

echo "== libFuzzer targets (clang, ASan + UBSan): 20 s each on the committed corpus, $(date -u +%T)" >&2
TARGET=fuzz_targets deploy/build.sh build-fuzz -DCMAKE_C_COMPILER=clang-14 \
  -DCMAKE_CXX_COMPILER=clang++-14 -DPORTICO_FUZZ=ON -DBUILD_TESTING=OFF -DPORTICO_WERROR=ON -DCMAKE_UNITY_BUILD=ON
tests/fuzz/run.sh 20 build-fuzz
echo "== done, $(date -u +%T)" >&2
