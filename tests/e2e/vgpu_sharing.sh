#!/usr/bin/env bash
# Fractions on a vGPU node run under the shim (against the stand-in driver
# built for the tests): a task cannot allocate past its cap and sees its cap
# as the GPU's size; a task bursting past its cap gives the memory back when
# a guaranteed task on its GPU needs it (checkpoint signal), and a burster
# that ignores its signal is evicted after its grace period and requeued.
source "$(dirname "$0")/lib.sh" "$1"

BIN=$(dirname "$TESSERA")
PROBE=$BIN/tessera-vgpu-probe
STANDIN=$BIN/vgpu-standin
[ -x "$PROBE" ] && [ -f "$STANDIN/libcuda.so.1" ] || { echo "SKIP: the vGPU probe and stand-in are not built" >&2; exit 77; }
GiB=1073741824

start_server
start_agent solo 2 --gpu-sharing vgpu,timeslice
wait_until 20 nodes_ready 1
[ "$("$TESSERA" nodes -o json | jq -c '.nodes[0].gpuSharing')" = '["vgpu","timeslice"]' ] || fail "the node should offer vgpu and timeslice"

# 1. The cap: 4 GiB of a (stand-in) 16 GiB GPU.
capped=$(submit --name capped --gpus 0.5 --gpu-memory 4Gi -e LD_LIBRARY_PATH="$STANDIN" -- \
  sh -c "$PROBE info && $PROBE alloc $GiB --count 10")
wait_until 30 job_state_is "$capped" succeeded
out=$("$TESSERA" logs "$capped")
echo "$out" | grep -q "total=$((4 * GiB)) free=$((4 * GiB))" || fail "cuMemGetInfo should show the 4 GiB vGPU: $out"
echo "$out" | grep -q "allocated=$((4 * GiB)) chunks=4 result=2" || fail "allocation should stop at the cap: $out"
"$TESSERA" logs --stderr "$capped" | grep -q "out of memory: 1.000 GiB more on GPU" || fail "the refusal should be in the task's stderr"
log "a vGPU task was held to its 4 GiB cap"

job_file() {  # NAME MEMORY BURST CHECKPOINT_YAML COMMAND
  cat >"$WORK/$1.yaml" <<YAML
apiVersion: tessera/v1
kind: Job
metadata: {name: $1}
spec:
  $4
  tasks:
    - name: main
      resources: {gpus: 0.5, gpuMemory: $2$( [ -n "$3" ] && echo ", gpuMemoryBurst: $3")}
      env: {LD_LIBRARY_PATH: "$STANDIN", TESSERA_STANDIN_GPU_MEMORY: "$((200 * GiB))"}
      command: [sh, -c, "$5"]
YAML
  "$TESSERA" submit -o json "$WORK/$1.yaml" | jq -r '.jobs[0].id'
}

# 2. A burst that is given back: 30 GiB guaranteed + 40 GiB burst on an 80 GiB GPU.
burster=$(job_file burster 30Gi 40Gi "checkpoint: {signal: SIGUSR1, gracePeriod: 20s}" \
  "exec $PROBE alloc $((10 * GiB)) --count 7 --hold 60 --give-back-on 10 --keep 3")
wait_until 30 sh -c "'$TESSERA' logs $burster | grep -q allocated=$((70 * GiB))"
wait_until 10 sh -c "[ \"\$('$TESSERA' nodes -o json | jq '.nodes[0].gpus[0].burstMemory')\" = $((40 * GiB)) ]"
log "the burster holds 40 GiB past its cap; the server sees it"
owner=$(submit --name owner --gpus 0.5 --gpu-memory 30Gi -e LD_LIBRARY_PATH="$STANDIN" -e TESSERA_STANDIN_GPU_MEMORY=$((200 * GiB)) -- \
  "$PROBE" alloc $((10 * GiB)) --count 3)
wait_until 30 job_state_is "$owner" succeeded
[ "$(job_field "$owner" '.tasks[0].gpus[0]')" = "$(job_field "$burster" '.tasks[0].gpus[0]')" ] || fail "the owner should share the burster's GPU"
"$TESSERA" logs "$owner" | grep -q "allocated=$((30 * GiB)) chunks=3" || fail "the owner should get its 30 GiB: $("$TESSERA" logs "$owner")"
"$TESSERA" logs "$burster" | grep -q "gave_back=$((40 * GiB))" || fail "the burster should have given its burst back"
job_state_is "$burster" running || fail "a burster that gave its memory back keeps running: $(job_json "$burster")"
log "the burster gave 40 GiB back on SIGUSR1; the owner got its guaranteed memory"

# 3. A burster that ignores its checkpoint signal is evicted after its grace period, and requeued.
"$TESSERA" cancel "$burster" >/dev/null
wait_until 20 job_state_is "$burster" cancelled
greedy=$(job_file greedy 30Gi 40Gi "checkpoint: {signal: SIGUSR1, gracePeriod: 2s}" \
  "exec $PROBE alloc $((10 * GiB)) --count 7 --hold 60 --give-back-on 10 --keep 7")
wait_until 30 sh -c "'$TESSERA' logs $greedy | grep -q allocated=$((70 * GiB))"
needy=$(submit --name needy --gpus 0.5 --gpu-memory 30Gi -e LD_LIBRARY_PATH="$STANDIN" -e TESSERA_STANDIN_GPU_MEMORY=$((200 * GiB)) -- \
  "$PROBE" alloc $((10 * GiB)) --count 3)
wait_until 30 job_state_is "$needy" succeeded
[ "$(job_field "$needy" '.tasks[0].gpus[0]')" = "$(job_field "$greedy" '.tasks[0].gpus[0]')" ] || fail "needy should share greedy's GPU"
wait_until 20 sh -c "[ \"\$('$TESSERA' describe -o json $greedy | jq .attempt)\" -ge 1 ]"
curl -s "$SERVER_URL/v1/events?since=0" | jq -e '.events[] | select(.message | test("was lost: evicted: held 40Gi"))' >/dev/null ||
  fail "greedy should be evicted for its burst: $(curl -s "$SERVER_URL/v1/events?since=0" | jq -c '.events[-5:]')"
[ "$(job_field "$greedy" .restarts)" = 0 ] || fail "an eviction does not use up a restart"
log "a burster that ignored its checkpoint signal was evicted and requeued"
