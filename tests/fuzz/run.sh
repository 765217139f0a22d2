#!/usr/bin/env bash
# Runs the libFuzzer targets built in a PORTICO_FUZZ build folder:
#   tests/fuzz/run.sh [SECONDS [BUILD_DIR [TARGET...]]]     (default 30 s each, build-fuzz, all)
# Each target starts from its committed corpus (tests/fuzz/corpus/NAME, read
# only) plus a scratch folder for what it finds; a crash, a sanitizer report
# or a broken invariant stops it, saves the input under BUILD_DIR/fuzz-findings
# and fails the run. Prints executions and coverage (edges) per target.
# The scratch folder is deleted at the end, unless FUZZ_KEEP=1: then, after a
# run without findings, its units are merged into the committed corpus with
# libFuzzer's -merge=1 (only those adding coverage are copied) for a commit.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-30}
build=${2:-build-fuzz}
shift 2 2>/dev/null || shift $#
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(request_parser response_parser path_router header_values config tls_handshake
                                  accept_encoding http2_session cache_policy)
findings="$build/fuzz-findings"
mkdir -p "$findings"
status=0
for name in "${targets[@]}"; do
  scratch=$(mktemp -d)
  log="$findings/$name.log"
  if "$build/tests/fuzz/fuzz_$name" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$findings/$name-" \
       "$scratch" "tests/fuzz/corpus/$name" >"$log" 2>&1; then
    result=ok
  else
    result=FAILED
    status=1
  fi
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  edges=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || echo "?")
  printf '%-16s %-6s %10s runs  %6s edges  (%s s)\n' "$name" "$result" "$runs" "$edges" "$seconds"
  [ "$result" = ok ] || tail -40 "$log" >&2
  if [ "${FUZZ_KEEP:-0}" = 1 ] && [ "$result" = ok ]; then
    if "$build/tests/fuzz/fuzz_$name" -merge=1 -timeout=30 -rss_limit_mb=2048 \
         "tests/fuzz/corpus/$name" "$scratch" >"$findings/$name-merge.log" 2>&1; then
      echo "$name: $(grep -oE 'MERGE-OUTER: [0-9]+ new files.*' "$findings/$name-merge.log")"
    else
      echo "$name: merge FAILED, see $findings/$name-merge.log" >&2
      status=1
    fi
  fi
  rm -rf "$scratch"
done
exit $status
