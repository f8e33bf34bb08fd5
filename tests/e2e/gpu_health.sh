#!/usr/bin/env bash
# GPU faults end to end, injected through the fake GPUs' fault file while a
# gang runs: a reset-class Xid takes one GPU (not the node) out of service,
# the gang is requeued without using up a restart and runs on, and the GPU
# returns after its health check; a hardware-class Xid keeps it out; an
# application-class Xid changes nothing.
source "$(dirname "$0")/lib.sh" "$1"

start_server
# Long enough that the checks after the requeue (a CLI call takes half a
# second under ASan) see the GPU still out before its health check returns it.
recheck=6
start_agent gpu-node 4 --gpu-recheck $recheck
wait_until 20 nodes_ready 1
faults="$WORK/gpu-node.gpus.yaml.faults"
gpus_state() { curl -s "$SERVER_URL/v1/cluster/gpus" | jq -r '.nodes[0].gpus'; }

job=$(submit --name train --gpus 2 -- sleep 600)
wait_until 20 job_state_is "$job" running
bad=$(job_field "$job" '.tasks[0].gpus[0]')
log "the job runs on GPUs $(job_field "$job" '.tasks[0].gpus | join(",")'); Xid 48 on GPU $bad"

echo "{\"gpu\": $bad, \"kind\": \"xid\", \"code\": 48}" >>"$faults"
wait_until 20 bash -c "[ \"\$(curl -s $SERVER_URL/v1/jobs/$job | jq .attempt)\" = 2 ]"
wait_until 20 job_state_is "$job" running
job_field "$job" '.tasks[0].gpus' | jq -e --argjson bad "$bad" 'index($bad) == null' >/dev/null || fail "the restarted run avoids GPU $bad"
[ "$(job_field "$job" .restarts)" = 0 ] || fail "a GPU fault uses up no restart"
[ "$(gpus_state | cut -c$((bad + 1)))" = U ] || fail "GPU $bad shows unhealthy: $(gpus_state)"
"$TESSERA" nodes | grep -q "gpu-node .*ready .*4 (1 out)" || fail "the node stays ready, one GPU out: $("$TESSERA" nodes)"
curl -s "$SERVER_URL/v1/events?since=0&kind=node" | jq -e '[.events[].type] | index("GpuUnhealthy") != null' >/dev/null ||
  fail "a GpuUnhealthy event"
log "GPU $bad out of service, the gang requeued onto the others; waiting for the health check"
wait_until 20 bash -c "[ \"\$(curl -s $SERVER_URL/v1/cluster/gpus | jq .counts.unhealthy)\" = 0 ]"
curl -s "$SERVER_URL/v1/events?since=0&kind=node" | jq -e '[.events[].type] | index("GpuHealthy") != null' >/dev/null ||
  fail "a GpuHealthy event"

# An application fault: reported, nothing else.
echo "{\"gpu\": $bad, \"kind\": \"xid\", \"code\": 13}" >>"$faults"
wait_until 20 bash -c "curl -s '$SERVER_URL/v1/events?since=0&kind=node' | jq -e '[.events[] | select(.type == \"GpuFault\") | .message] | any(test(\"Xid 13.*application\"))' >/dev/null"
[ "$(job_field "$job" .attempt)" = 2 ] || fail "an application fault elsewhere requeues nothing"

# A GPU that fell off the bus stays out, health checks or not.
held=$(job_field "$job" '.tasks[0].gpus[0]')
echo "{\"gpu\": $held, \"kind\": \"xid\", \"code\": 79}" >>"$faults"
wait_until 20 bash -c "[ \"\$(curl -s $SERVER_URL/v1/jobs/$job | jq .attempt)\" = 3 ]"
sleep $((2 * recheck + 1))  # two recheck intervals
[ "$(gpus_state | cut -c$((held + 1)))" = U ] || fail "GPU $held stays out after Xid 79: $(gpus_state)"
curl -s "$SERVER_URL/v1/nodes/gpu-node" | jq -e --argjson g "$held" '.gpus[$g].outOfService | test("Xid 79.*hardware")' >/dev/null ||
  fail "the node says why GPU $held is out"
curl -s "http://$(grep -o 'metrics: http://[0-9.:]*' "$WORK/gpu-node.log" | sed 's|metrics: http://||')/metrics" |
  grep -q "tessera_gpu_healthy{gpu=\"$held\".* 0" || fail "the agent's metrics show GPU $held out of service"
log "Xid 79: GPU $held stays out; the job runs on in attempt $(job_field "$job" .attempt)"
