#!/usr/bin/env bash
# The libFuzzer targets (tests/fuzz): build them with clang under ASan and
# UBSan, run each for a fixed budget (default 60 s; `scripts/fuzz.sh 300` for
# five minutes each), and print the executions per target and in total.
# Outside the default suite: run on purpose. A crash fails the run and leaves
# its input (crash-*) in the current directory.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export CCACHE_DIR="${CCACHE_DIR:-$PWD/.cache/ccache}"
cmake --preset fuzz -DTESSERA_FUZZ_SECONDS="${1:-60}" >/dev/null
cmake --build --preset fuzz
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
ctest --preset fuzz >"$log" 2>&1 || status=$?
# libFuzzer's final stats: "stat::number_of_executed_units: N".
awk '/Test command:/ { name = $0; sub(/.*\/fuzz_/, "", name); sub(/ .*/, "", name) }
     /stat::number_of_executed_units:/ { runs[name] = $2; total += $2 }
     /Test +#[0-9]+: fuzz_/ { result[$4] = $NF }
     END { for (n in runs) printf "fuzz %-14s %12d executions\n", n, runs[n]; printf "fuzz %-14s %12d executions\n", "total", total }' "$log"
grep -E "tests passed|tests failed|Failed|SUMMARY|ERROR" "$log" || true
exit "$status"
