#!/usr/bin/env bash
# The whole test suite: build under AddressSanitizer + UndefinedBehaviorSanitizer
# with warnings as errors, then run every CTest test except those labelled
# `slow` (scale runs are benchmarks, run on purpose). One build only: the
# release build (scripts/demo.sh, benchmarks) costs as much again, which CI's
# time budget cannot hold. Extra arguments go to ctest, e.g.
# `scripts/test.sh -L scenario`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export CCACHE_DIR="${CCACHE_DIR:-$PWD/.cache/ccache}"
cmake --preset asan >/dev/null
cmake --build --preset asan
ctest --preset asan -LE slow "$@"
