#!/usr/bin/env bash
# The fault campaign, kept (issue 12): a fuzzed hook corpus (>= 2,000
# generated inputs: wrong types, sizes, Unicode, hostile paths, FIFOs and
# devices as transcripts), 200 kill -9 trials across replay, reconcile and
# the daemon, concurrent sessions on one warm graph, the corruption matrix
# and the secrets corpus. Prints one table: family, cases, failures.
#
# Everything is local (temp state homes, no network) and every loop is
# bounded. The cases live in tests/faults.rs; `scripts/test.sh` runs a fast
# subset of each family with the rest of the suite.
#
#   bash scripts/faults.sh            # the full campaign (tens of minutes on 2 cores)
#   FAULTS_SCALE=fast bash scripts/faults.sh   # the fast subset, same table
#   FAULTS_RELEASE=1 bash scripts/faults.sh    # against the release binary (built first)
#   FAULTS_KILL_TRIALS=300 FAULTS_KILL_KINDS=daemon bash scripts/faults.sh
#                                     # (with the other families) 300 daemon kill trials
set -uo pipefail
cd "$(dirname "$0")/.."

scale="${FAULTS_SCALE:-full}"
binary="debug"
if [ "${FAULTS_RELEASE:-0}" = "1" ]; then
  nice -n 19 cargo build --release --bins >&2 || exit 1
  target_dir="${CARGO_TARGET_DIR:-target}"
  case "$target_dir" in /*) ;; *) target_dir="$(pwd)/$target_dir" ;; esac
  export ROLLGRAPH_TEST_BIN="$target_dir/release/rollgraph"
  binary="release"
elif [ -n "${ROLLGRAPH_TEST_BIN:-}" ]; then
  binary="$ROLLGRAPH_TEST_BIN"
fi
out="$(mktemp "${TMPDIR:-/tmp}/rollgraph-faults.XXXXXX")"
notes="$(mktemp "${TMPDIR:-/tmp}/rollgraph-faults-notes.XXXXXX")"
trap 'rm -f "$out" "$notes"' EXIT

FAULTS_SCALE="$scale" FAULTS_OUT="$out" FAULTS_NOTES="$notes" nice -n 19 cargo test --test integration faults:: \
  -- --test-threads=1 >&2
status=$?

echo
echo "rollgraph fault campaign ($scale, $binary binary)"
printf '%-22s %8s %9s  %s\n' "family" "cases" "failures" "first failure"
total_cases=0
total_failures=0
while IFS=$'\t' read -r family cases failures first; do
  printf '%-22s %8s %9s  %s\n' "$family" "$cases" "$failures" "${first:0:100}"
  total_cases=$((total_cases + cases))
  total_failures=$((total_failures + failures))
done < "$out"
printf '%-22s %8s %9s\n' "total" "$total_cases" "$total_failures"
if [ -s "$notes" ]; then
  echo "notes:"
  sed 's/^/  /' "$notes"
fi
families=$(wc -l < "$out")
if [ "$families" -lt 5 ]; then
  echo "faults.sh: only $families of 5 families reported (a test crashed before reporting)" >&2
  exit 1
fi
exit "$status"
