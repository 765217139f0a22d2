#!/usr/bin/env bash
# clang-format-14 (.clang-format) on the C++ lines this change touches:
#   deploy/check-format.sh [--fix] [BASE]      (--fix formats those lines in place)
# BASE defaults to the merge base with origin/main (or main); on CI's fresh
# clone, where there is no other branch, to HEAD~1 (the last commit); on a
# repository of one commit, to the empty tree (every line); a shallow clone
# fetches the parent, or says it cannot check. Uncommitted
# changes count too. Only the changed lines are checked, with --lines: much
# of the tree predates the format, and a change must not have to reformat
# whole files it barely touches. Includes are not sorted: the tree's order
# (Catch first, a group of its own) is not .clang-format's Google order, and
# sorting would flag the whole block of a file where one include is added.
# Fails, with clang-format's diagnostics, on a changed line it would format
# differently.
set -euo pipefail
cd "$(dirname "$0")/.."
format=clang-format-14
command -v "$format" >/dev/null || {
  echo "check-format: $format is not installed (deploy/install-deps.sh --test installs it)" >&2
  exit 1
}

mode=(--dry-run -Werror)
if [ "${1:-}" = --fix ]; then
  mode=(-i)
  shift
fi
base=${1:-}
if [ -z "$base" ]; then
  for ref in origin/main main; do
    if git rev-parse -q --verify "$ref^{commit}" >/dev/null &&
      base=$(git merge-base HEAD "$ref") && [ "$base" != "$(git rev-parse HEAD)" ]; then
      break
    fi
    base=
  done
fi
if [ -z "$base" ] && ! git rev-parse -q --verify 'HEAD~1^{commit}' >/dev/null &&
  [ "$(git rev-parse --is-shallow-repository)" = true ]; then
  # A shallow clone (git clone --depth 1): fetch the parent if the remote
  # is there.
  git fetch -q --deepen=1 2>/dev/null || true
fi
if [ -z "$base" ]; then
  if git rev-parse -q --verify 'HEAD~1^{commit}' >/dev/null; then
    base=$(git rev-parse HEAD~1)
  elif [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    echo "check-format: NOT CHECKED: a shallow clone without the last commit's parent," \
      "so no change to compare (clone with --depth 2, or give BASE)" >&2
    exit 0
  else
    base=$(git hash-object -t tree /dev/null)  # the empty tree: a first commit, every line
  fi
fi
echo "check-format: C++ lines changed since $(git rev-parse --short "$base" 2>/dev/null || echo "$base")" >&2

status=0
checked=0
while IFS= read -r -d '' file; do
  [ -f "$file" ] || continue  # deleted
  # The changed line ranges, from the new side of each hunk: "@@ -a,b +c,d @@".
  ranges=()
  while read -r start count; do
    [ "$count" = 0 ] && continue  # lines only removed
    ranges+=("--lines=$start:$((start + count - 1))")
  done < <(git diff -U0 --no-color "$base" -- "$file" |
    sed -n 's/^@@ -[0-9,]* +\([0-9]*\)\(,\([0-9]*\)\)\? @@.*/\1 \3/p' |
    awk '{ print $1, ($2 == "" ? 1 : $2) }')
  [ ${#ranges[@]} -eq 0 ] && continue
  checked=$((checked + 1))
  "$format" "${mode[@]}" --sort-includes=false "${ranges[@]}" "$file" || status=1
done < <(git diff -z --name-only --diff-filter=d "$base" -- \
  '*.cpp' '*.hpp' '*.h' '*.cc' '*.cxx' '*.c')

if [ "$status" -ne 0 ]; then
  echo "check-format: changed lines above are not formatted; deploy/check-format.sh --fix formats them" >&2
  exit 1
fi
echo "check-format: $checked file(s), changed lines formatted" >&2
