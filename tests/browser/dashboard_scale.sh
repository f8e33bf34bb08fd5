#!/usr/bin/env bash
# The dashboard at 25,000 GPUs: a real server loaded by virtual agents
# (`tessera bench virtual-cluster`: 3,125 nodes of 8 GPUs, 20,000 jobs, so the
# cluster is full and half the jobs wait), measured in headless Chromium.
# A benchmark, labelled slow: it prints figures and fails only when a page
# does not render at all.
#   dashboard_scale.sh TESSERA_BINARY [SCREENSHOT_DIR] [AGENTS]
source "$(dirname "$0")/../e2e/lib.sh" "$1"
SHOTS=$(realpath -m "${2:-$WORK}")
AGENTS=${3:-3125}
mkdir -p "$SHOTS"

start_server --heartbeat-timeout 300
"$TESSERA" bench virtual-cluster --server "$SERVER_URL" --agents "$AGENTS" --jobs $((AGENTS * 32 / 5)) --task-seconds 3600 \
  >"$WORK/virtual-cluster.log" 2>&1 &
PIDS+=("$!")
wait_until 300 grep -q "ready" "$WORK/virtual-cluster.log"
log "$(cat "$WORK/virtual-cluster.log")"
sleep 11  # one heartbeat round, so every GPU has telemetry

for path in /v1/cluster/gpus "/v1/nodes?gpus=false" "/v1/jobs?state=active&limit=500"; do
  for _ in 1 2 3 4 5; do curl -s -o /dev/null -w '%{size_download} %{time_total}\n' "$SERVER_URL$path"; done |
    sort -k2 -n | sed -n 3p | awk -v p="$path" '{ printf "GET %-34s %8.0f KB  median %.1f ms (of 5)\n", p, $1 / 1024, $2 * 1000 }'
done
/usr/bin/python3 "$(dirname "$0")/dashboard_scale.py" --server "$SERVER_URL" --screenshots "$SHOTS"
