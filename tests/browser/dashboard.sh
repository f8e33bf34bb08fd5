#!/usr/bin/env bash
# The web dashboard in headless Chromium (Debian's chromium and chromedriver,
# driven by Debian's python3-selenium) against a real server and agents:
# pages load with no console error, the numbers match the API, the page
# follows the cluster live, and the run saves screenshots.
#   dashboard.sh TESSERA_BINARY SCREENSHOT_DIR
source "$(dirname "$0")/../e2e/lib.sh" "$1"
SHOTS=$(realpath -m "${2:-$WORK}")
mkdir -p "$SHOTS"
for need in /usr/bin/chromium /usr/bin/chromedriver; do
  [ -x "$need" ] || fail "$need is missing: scripts/install-deps.sh installs chromium and chromium-driver"
done
/usr/bin/python3 -c 'import selenium' 2>/dev/null || fail "python3-selenium is missing: scripts/install-deps.sh installs it"

start_server
# Two leaf switches; gpu-b's GPUs report 0%, so the job placed there shows as an idle allocation.
printf 'gpus: 4\nmodel: H100\nmemory: 80Gi\nutilization: 90\n' >"$WORK/a.gpus.yaml"
printf 'gpus: 2\nmodel: A100\nmemory: 40Gi\nutilization: 0\n' >"$WORK/b.gpus.yaml"
for node in a b; do
  "$TESSERA" agent --server "$SERVER_URL" --name "gpu-$node" --address 127.0.0.1 --data-dir "$WORK/$node" --leaf "leaf-$node" \
    --fake-gpus "$WORK/$node.gpus.yaml" --heartbeat 0.5 --grace 1 --no-cgroups --metrics-listen "" >>"$WORK/gpu-$node.log" 2>&1 &
  PIDS+=("$!")
done
wait_until 20 nodes_ready 2
"$TESSERA" queues set research --guaranteed 2 >/dev/null
"$TESSERA" submit --name prep -- echo "prepared the dataset" >/dev/null
"$TESSERA" nodes cordon gpu-a >/dev/null  # train goes to gpu-b
train=$(submit --name train --queue research --gpus 2 -- python3 -u -c '
import time
for step in range(10000):
    print(f"step {step} loss {1 / (step + 1):.4f}", flush=True)
    time.sleep(0.2)')
wait_until 30 job_state_is "$train" running
"$TESSERA" nodes uncordon gpu-a >/dev/null
submit --name notebook --gpus 0.5 --gpu-memory 10Gi -- sleep 600 >/dev/null
wait_until 30 bash -c "[ \"\$(curl -s $SERVER_URL/v1/jobs?state=running | jq '.jobs | length')\" = 2 ]"

/usr/bin/python3 "$(dirname "$0")/dashboard_test.py" --server "$SERVER_URL" --tessera "$TESSERA" --screenshots "$SHOTS" \
  --job "$train" --marker "e2e-$$"
log "screenshots in $SHOTS"
