#!/usr/bin/env bash
# The test suite:
#   deploy/test.sh          installs what is missing, builds once (the normal
#                           build) and runs the whole suite once: the
#                           command to run before sending a change (under
#                           10 minutes on two cores from a fresh clone)
#   deploy/test.sh --full   what CI runs (.ci/run): the format of the changed
#                           lines, the same normal build and suite, then a
#                           Release (-O3) build with clang-14, one with
#                           AddressSanitizer + UndefinedBehaviorSanitizer and
#                           the libFuzzer targets (about 25 minutes)
# Any sanitizer report, in any process (workers too), fails the run. Warnings
# are errors here (PORTICO_WERROR), never in a user's own build.
#
# The Release build uses clang-14 instead of GCC: it costs no extra build,
# and the whole tree, tests included, then compiles with both compilers and
# -Werror (each warns about things the other does not) while the suite still
# runs under GCC twice (the normal and the sanitizer build). -O3 is where a
# second compiler's optimizer finds most: code that only works the way one
# compiler happens to compile it. The fuzz build is clang too but builds no
# tests (BUILD_TESTING=OFF).
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
# in the first and the sanitizer build. A test that cannot run here (no
# root, a tool missing) is reported skipped, never passed: after each ctest
# run, the skipped tests and their reasons are listed. Each phase prints its
# start time.
set -euo pipefail
cd "$(dirname "$0")/.."
full=false
case "${1:-}" in
  "") ;;
  --full) full=true ;;
  *) echo "usage: deploy/test.sh [--full]" >&2; exit 2 ;;
esac

# ctest in build folder $1 with the remaining arguments, then the tests that
# did not run and why. ctest lists their names last ("The following tests did
# not run"); the reasons are in their output, which LastTest.log keeps (it
# says "Test Passed." for a skipped test, so the names come from ctest's own
# list): PORTICO_SKIP's "SKIPPED:" line, or a script's last line.
run_ctest() {
  local dir=$1 status=0
  shift
  local out="$dir/Testing/ctest-output.txt"
  mkdir -p "$dir/Testing"
  (cd "$dir" && ctest -j2 --output-on-failure "$@") 2>&1 | tee "$out" || status=$?
  local skipped
  skipped=$(sed -n '/^The following tests did not run:/,/^$/s/^[[:space:]]*[0-9]* - \(.*\) (Skipped)$/\1/p' "$out")
  if [ -z "$skipped" ]; then
    echo "no test skipped in $dir" >&2
  else
    printf '%s\n' "$skipped" | awk -v logfile="$dir/Testing/Temporary/LastTest.log" '
      { skipped[$0] = 1; order[++count] = $0 }
      END {
        while ((getline line < logfile) > 0) {
          if (line ~ /^[0-9]+\/[0-9]+ Testing: /) {
            name = line; sub(/^[0-9]+\/[0-9]+ Testing: /, "", name); n = 0; reason = ""
          } else if (line == "Output:") {
            inside = 1; getline line < logfile  # the dashes
          } else if (line == "<end of output>") {
            inside = 0
            if (name in skipped) {
              if (reason == "" && n > 0) reason = last
              reasons[name] = reason
            }
          } else if (inside) {
            n++; last = line
            if (line ~ /^SKIPPED: / && reason == "") {
              reason = substr(line, 10)
              test_case = substr(name, index(name, ":") + 1); sub(/^ /, "", test_case)
              if (index(reason, test_case ": ") == 1) reason = substr(reason, length(test_case) + 3)
            }
          }
        }
        printf "%d test(s) skipped:\n", count
        for (i = 1; i <= count; i++)
          printf "  %s\n      %s\n", order[i], (order[i] in reasons ? reasons[order[i]] : "(no output)")
      }' >&2
  fi
  return "$status"
}

deploy/install-deps.sh --test

if $full; then
  echo "== clang-format-14 on the changed lines, $(date -u +%T)" >&2
  deploy/check-format.sh
fi

echo "== normal build, $(date -u +%T)" >&2
deploy/build.sh build -DPORTICO_WERROR=ON -DCMAKE_UNITY_BUILD=ON
echo "== normal build's tests, $(date -u +%T)" >&2
run_ctest build

if ! $full; then
  echo "== done, $(date -u +%T) (deploy/test.sh --full adds clang-14 -O3, sanitizer and fuzz builds, as CI)" >&2
  exit 0
fi

echo "== Release build (-O3) with clang-14, $(date -u +%T)" >&2
deploy/build.sh build-release-clang -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-14 \
  -DCMAKE_CXX_COMPILER=clang++-14 -DPORTICO_WERROR=ON -DPORTICO_SOAK=OFF -DCMAKE_UNITY_BUILD=ON
run_ctest build-release-clang -LE 'build-independent|tls-scan'

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build, $(date -u +%T)" >&2
deploy/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DPORTICO_SANITIZE=ON -DPORTICO_WERROR=ON \
  -DPORTICO_SOAK=OFF -DCMAKE_UNITY_BUILD=ON
reports="$PWD/build-asan/sanitizer-reports"
rm -rf "$reports" && mkdir -p "$reports"
# Reports go to files because a worker's stderr is the test's log file,
# which the test deletes; the check below reads them all.
export ASAN_OPTIONS="log_path=$reports/asan:abort_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1"
run_ctest build-asan -LE build-independent
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
