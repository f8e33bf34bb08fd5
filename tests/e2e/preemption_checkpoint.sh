#!/usr/bin/env bash
# Preemption weighs the checkpoint a job reports through a real agent: on a
# 2-GPU node, "old" starts first and "young" after it; old then writes a
# checkpoint and touches TESSERA_CHECKPOINT_FILE. A high-priority job needs
# a GPU: old goes, because only seconds of its work are lost, where young
# would lose everything since it started (without the report, old would have
# lost the most and young would have gone).
source "$(dirname "$0")/lib.sh" "$1"

start_server
start_agent n1 2
wait_until 20 nodes_ready 1

job() {  # job NAME PRIORITY COMMAND
  printf 'apiVersion: tessera/v1\nkind: Job\nmetadata: {name: %s}\nspec:\n  priority: %s\n  tasks: [{name: m, resources: {gpus: 1}, command: [sh, -c, %s]}]\n' \
    "$1" "$2" "'$3'" >"$WORK/$1.yaml"
  submit "$WORK/$1.yaml"
}
# old checkpoints once the test says so (within a minute), then works on.
old=$(job old 0 "for i in \$(seq 300); do [ -e $WORK/go ] && break; sleep 0.2; done; touch \"\$TESSERA_CHECKPOINT_FILE\"; sleep 600")
wait_until 60 job_state_is "$old" running
young=$(job young 0 "sleep 600")
wait_until 60 job_state_is "$young" running
sleep 2  # young's work since its start grows; old's too, until its checkpoint
touch "$WORK/go"
has_checkpoint() { [ "$(job_field "$old" '.lastCheckpointTime // 0')" -gt 0 ]; }
wait_until 30 has_checkpoint
urgent=$(job urgent 100 "sleep 600")
wait_until 60 job_state_is "$urgent" running
job_state_is "$old" pending || fail "old, which had just checkpointed, should have been preempted: $(job_json "$old" | jq -c '{state, message}')"
job_field "$old" .message | grep -q "preempted by job $urgent" || fail "old's message: $(job_field "$old" .message)"
"$TESSERA" describe "$old" | grep -q "^Lost work: " || fail "describe should show the work old lost: $("$TESSERA" describe "$old")"
job_state_is "$young" running || fail "young should run on: $(job_json "$young" | jq -c '{state, message}')"
log "preempted old (checkpointed at $(job_field "$old" .lastCheckpointTime // 0)) rather than young"
