#!/usr/bin/env bash
# Two half-GPU jobs share one GPU of a one-GPU node, at the same time, each
# told its share; a third half-GPU job must wait until one of them ends. The
# second names no GPU memory and holds half of the 80 GiB GPU's.
source "$(dirname "$0")/lib.sh" "$1"

start_server
start_agent solo 1
wait_until 20 nodes_ready 1

# Each half holds its share until the test releases it, however slow the checks.
release="$WORK/release"
for name in half-a half-b half-c; do
  memory=(--gpu-memory 30Gi)
  [ "$name" = half-b ] && memory=()
  "$TESSERA" submit -o json --name "$name" --gpus 0.5 "${memory[@]}" -- \
    sh -c 'echo gpus=$CUDA_VISIBLE_DEVICES milli=$TESSERA_GPU_MILLI mem=$TESSERA_GPU_MEMORY_LIMIT; until [ -e "$0" ]; do sleep 0.1; done' \
    "$release" >/dev/null
done
a=0 b=1 c=2
wait_until 20 job_state_is $a running
wait_until 20 job_state_is $b running
job_state_is $c pending || fail "a third half must wait: $(job_json $c)"
[ "$(job_field $a '.tasks[0].gpus[0]')" = "$(job_field $b '.tasks[0].gpus[0]')" ] || fail "both halves should share GPU 0"
alloc=$("$TESSERA" nodes -o json | jq '.nodes[0].gpus[0].allocatedMilli')
[ "$alloc" -eq 1000 ] || fail "GPU 0 should be fully allocated by two halves, got $alloc milli"
job_state_is $c pending || fail "the third half must still wait: $(job_json $c)"
touch "$release"
wait_until 30 job_state_is $c succeeded
"$TESSERA" logs $a | grep -q "gpus=0 milli=500 mem=32212254720" || fail "the task should see its share: $("$TESSERA" logs $a)"
"$TESSERA" logs $b | grep -q "gpus=0 milli=500 mem=42949672960" || fail "half of an 80Gi GPU is 40Gi: $("$TESSERA" logs $b)"
"$TESSERA" describe $b | grep -q "0 (0.5 GPU, 40Gi)" || fail "describe should show the task's 40Gi: $("$TESSERA" describe $b)"
"$TESSERA" describe $b | grep -q "GPU memory: a fraction's share of the GPU it lands on" || fail "describe should say the memory is the share"
log "two halves shared GPU 0; the third ran after"
