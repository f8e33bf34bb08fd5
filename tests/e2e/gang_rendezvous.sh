#!/usr/bin/env bash
# A 2-node x 4-GPU gang on a server with 4 agents: both ranks start, meet over
# TCP at MASTER_ADDR:MASTER_PORT, agree on WORLD_SIZE and RANK, and succeed.
source "$(dirname "$0")/lib.sh" "$1"

start_server
for n in n1 n2 n3 n4; do start_agent "$n" 4; done
wait_until 20 nodes_ready 4

cat >"$WORK/gang.yaml" <<YAML
apiVersion: tessera/v1
kind: Job
metadata: {name: ddp}
spec:
  tasks:
    - name: worker
      replicas: 2
      resources: {gpus: 4}
      command: [python3, $E2E_DIR/../../examples/jobs/rendezvous.py]
YAML
id=$(submit "$WORK/gang.yaml")
log "submitted gang job $id"
wait_until 60 job_state_is "$id" succeeded

job=$(job_json "$id")
[ "$(echo "$job" | jq '[.tasks[].node] | unique | length')" -eq 2 ] || fail "the gang should span two nodes: $job"
[ "$(echo "$job" | jq '[.tasks[].gpus | length] | add')" -eq 8 ] || fail "each rank should hold 4 GPUs: $job"
for t in worker-0 worker-1; do
  out=$("$TESSERA" logs "$id" --task "$t")
  echo "$out" | grep -q "rendezvous ok with world 2" || fail "$t did not meet the gang: $out"
done
"$TESSERA" logs "$id" --task worker-0 | grep -q "rank 0: .* gpus 0,1,2,3" || fail "rank 0 should see its 4 GPUs"
log "gang met: $("$TESSERA" logs "$id" --task worker-1)"
