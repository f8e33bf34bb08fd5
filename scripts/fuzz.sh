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
# libFuzzer's final stats, "NN: stat::number_of_executed_units: N", under
# each test's number ("Test #NN: fuzz_job_spec").
/usr/bin/python3 - "$log" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
names = dict(re.findall(r"Test +#(\d+): fuzz_(\w+)", text))
runs = {names.get(n, n): int(v) for n, v in re.findall(r"^(\d+): stat::number_of_executed_units: (\d+)", text, re.M)}
for name, count in sorted(runs.items()):
    print(f"fuzz {name:<14} {count:>12,} executions")
print(f"fuzz {'total':<14} {sum(runs.values()):>12,} executions")
PY
grep -E "tests passed|tests failed|Failed|SUMMARY|ERROR" "$log" || true
exit "$status"
