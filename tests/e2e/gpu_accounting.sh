#!/usr/bin/env bash
# Idle-GPU accounting from the agents' telemetry: a job on GPUs that report
# 0% is warned about and then reclaimed by the idle policy; a job on busy GPUs
# accrues GPU time but no idle time; `tessera history` and the server's
# metrics show both.
source "$(dirname "$0")/lib.sh" "$1"

start_server --idle-threshold 5 --idle-window 2s --idle-warn-after 3s --idle-reclaim-after 6s
start_agent idle-node 1
wait_until 20 nodes_ready 1
idle=$(submit --name notebook --gpus 1 -- sleep 120)
wait_until 20 job_state_is "$idle" running
# Then a node whose fake GPUs report 80% busy, for a job that works.
cat >"$WORK/busy.gpus.yaml" <<'YAML'
gpus: 1
model: H100
memory: 80Gi
utilization: 80
YAML
"$TESSERA" agent --server "$SERVER_URL" --name busy-node --address 127.0.0.1 --data-dir "$WORK/busy" \
  --fake-gpus "$WORK/busy.gpus.yaml" --heartbeat 0.5 --no-cgroups --metrics-listen "" >>"$WORK/busy.log" 2>&1 &
PIDS+=("$!")
wait_until 20 nodes_ready 2
busy=$(submit --name train --gpus 1 -- sleep 4)
wait_until 20 job_state_is "$busy" running
[ "$(job_field "$busy" '.tasks[0].node')" = busy-node ] || fail "the second job runs on the busy node"
wait_until 30 job_state_is "$busy" succeeded
wait_until 30 job_state_is "$idle" cancelled
job_field "$idle" .message | grep -q "reclaimed by the idle policy: its GPUs were idle for 6s" || fail "reclaim message: $(job_json "$idle")"
curl -s "$SERVER_URL/v1/events?since=0" | jq -e '.events[] | select(.type == "JobIdle")' >/dev/null || fail "a JobIdle warning first"
log "the idle job was warned, then reclaimed; the busy one ran to its end"

hist=$("$TESSERA" history -o json)
idle_s=$(jq --argjson id "$idle" '.jobs[] | select(.id == $id) | .idleGpuSeconds' <<<"$hist")
idle_held=$(jq --argjson id "$idle" '.jobs[] | select(.id == $id) | .gpuSeconds' <<<"$hist")
busy_idle=$(jq --argjson id "$busy" '.jobs[] | select(.id == $id) | .idleGpuSeconds' <<<"$hist")
busy_held=$(jq --argjson id "$busy" '.jobs[] | select(.id == $id) | .gpuSeconds' <<<"$hist")
awk -v i="$idle_s" -v h="$idle_held" 'BEGIN { exit !(i >= 5 && i <= h && h <= 10) }' || fail "idle job: $idle_s idle of $idle_held GPU-seconds"
awk -v i="$busy_idle" -v h="$busy_held" 'BEGIN { exit !(i == 0 && h >= 2 && h <= 6) }' || fail "busy job: $busy_idle idle of $busy_held GPU-seconds"
"$TESSERA" history | grep -q notebook || fail "the table lists the job"
"$TESSERA" describe "$idle" | grep -q "^GPU time:   .* GPU-hours, 100% of it idle" || fail "describe shows the GPU time: $("$TESSERA" describe "$idle")"
"$TESSERA" nodes | grep -q "vgpu,timeslice" || fail "tessera nodes shows the sharing modes"
"$TESSERA" history --by user -o json | jq -e '.rows[0].jobs == 2' >/dev/null || fail "two jobs for the user"
curl -s "$SERVER_URL/v1/accounting?by=queue" | jq -e --argjson h "$idle_held" --argjson b "$busy_held" \
  '.rows[0].queue == "default" and ((.rows[0].gpuHours * 3600 - $h - $b) | fabs) < 0.01' >/dev/null ||
  fail "accounting per queue: $(curl -s "$SERVER_URL/v1/accounting?by=queue")"
curl -s "$SERVER_URL/v1/accounting?by=team" | jq -e '.code == 400' >/dev/null || fail "by=team is a 400"
curl -sf "$SERVER_URL/metrics" | grep -q '^tessera_gpu_idle_seconds_total{queue="default",user=".*"} [5-9]' ||
  fail "idle seconds in the metrics: $(curl -sf "$SERVER_URL/metrics" | grep tessera_gpu_)"
log "history and metrics account $idle_s idle GPU-seconds of $idle_held, and none of the busy job's $busy_held"
