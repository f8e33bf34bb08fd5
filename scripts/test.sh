#!/usr/bin/env bash
# The whole test suite: build under AddressSanitizer + UndefinedBehaviorSanitizer
# with warnings as errors, then run every CTest test except those labelled
# `slow` (scale runs are benchmarks, run on purpose). The release preset is
# built too, since g++ warns about different things at -O3. Extra arguments go
# to ctest, e.g. `scripts/test.sh -L scenario`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export CCACHE_DIR="${CCACHE_DIR:-$PWD/.cache/ccache}"
cmake --preset asan >/dev/null
cmake --build --preset asan
cmake --preset release >/dev/null
cmake --build --preset release
ctest --preset asan -LE slow "$@"
