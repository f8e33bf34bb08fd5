#!/usr/bin/env bash
# kill -9 of an agent under a running 2-node gang: after the heartbeat timeout
# its node is lost, the whole gang is stopped and requeued (not counted as a
# job failure), and it runs again on the two healthy nodes.
source "$(dirname "$0")/lib.sh" "$1"

start_server --heartbeat-timeout 2
for n in n1 n2 n3; do start_agent "$n" 4; done
wait_until 20 nodes_ready 3

id=$(submit --name gang --gpus 4 --tasks 2 -- python3 -c "import time; time.sleep(300)" "e2e-$$")
wait_until 20 job_state_is "$id" running
victim=$(job_field "$id" '.tasks[0].node')
log "killing agent $victim under job $id"
kill -9 "${AGENT_PID[$victim]}"

requeued_elsewhere() {
  local job
  job=$(job_json "$id")
  [ "$(echo "$job" | jq -r .state)" = running ] && [ "$(echo "$job" | jq .attempt)" -eq 2 ] &&
    ! echo "$job" | jq -r '.tasks[].node' | grep -qx "$victim"
}
wait_until 30 requeued_elsewhere
[ "$("$TESSERA" nodes -o json | jq -r ".nodes[] | select(.name == \"$victim\") | .state")" = lost ] || fail "$victim should be lost"
[ "$(job_field "$id" .restarts)" -eq 0 ] || fail "a lost node is not the job's failure"
job_json "$id" | jq -r '.events[].type' | grep -q JobRequeued || fail "the requeue should be an event"
# The healthy rank of the first run was stopped, not left running beside the new one.
# The tasks, not their supervisors: the one on the dead agent's node runs on under its own.
[ "$(pgrep -fc "^python3 .*e2e-$$")" -le 3 ] || fail "the first run's healthy rank should have been stopped: $(pgrep -fa "e2e-$$")"
log "gang requeued onto $(job_json "$id" | jq -r '[.tasks[].node] | join(",")')"
