#!/usr/bin/env bash
# The main job on its embedded default: build Tessera (release) and schedule
# the bundled example workload on the bundled example cluster, printing the
# placements, the reasons jobs wait, and the utilization.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target tessera
exec build/release/tessera demo "$@"
