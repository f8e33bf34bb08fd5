#!/usr/bin/env bash
# Tasks outlive their agent. kill -9 of an agent under three running jobs,
# then, while no agent runs: one job's task exits, another job is cancelled.
# The agent started again adopts what still runs and reports what ended:
# nothing is started twice or requeued, every exit code reaches the server,
# the cancelled job's task is stopped, and the output printed while no agent
# ran reaches `tessera logs`. Then the same for `tessera up` killed with -9.
source "$(dirname "$0")/lib.sh" "$1"

start_server --heartbeat-timeout 30
start_agent n1 4
wait_until 20 nodes_ready 1

# job TAG CODE: a task that records its start, waits for $WORK/go-TAG, prints and exits CODE.
job() {
  submit --name "$1" --gpus 1 -- sh -c "echo \$\$ >> $WORK/starts-$1; while [ ! -e $WORK/go-$1 ]; do sleep 0.05; done; echo $1 done; exit $2" "e2e-$$"
}
keeps=$(job keeps 7)
ends=$(job ends 0)
cancelled=$(job cancelled 0)
for id in "$keeps" "$ends" "$cancelled"; do wait_until 20 job_state_is "$id" running; done
for tag in keeps ends cancelled; do wait_until 10 test -s "$WORK/starts-$tag"; done
grep -q "tasks run under .*tessera-supervise" "$WORK/n1.log" || fail "the agent should run its tasks under a supervisor: $(cat "$WORK/n1.log")"

kill -9 "${AGENT_PID[n1]}"
log "kill -9 of agent n1 under jobs $keeps, $ends, $cancelled"
for tag in keeps ends cancelled; do kill -0 "$(cat "$WORK/starts-$tag")" || fail "$tag's task should outlive its agent"; done
touch "$WORK/go-ends"
wait_until 10 bash -c "! kill -0 $(cat "$WORK/starts-ends") 2>/dev/null"
"$TESSERA" cancel "$cancelled" >/dev/null

start_agent n1 4
wait_until 20 job_state_is "$ends" succeeded
grep -q "adopted 2 running tasks" "$WORK/n1.log" || fail "the new agent should adopt 2 tasks: $(tail -n 20 "$WORK/n1.log")"
cancelled_pid=$(cat "$WORK/starts-cancelled")
wait_until 10 bash -c "! kill -0 $cancelled_pid 2>/dev/null"
job_state_is "$keeps" running || fail "job $keeps should still be running: $(job_field "$keeps" .state)"
wait_until 10 bash -c "'$TESSERA' logs $ends | grep -qx 'ends done'"

touch "$WORK/go-keeps"
wait_until 20 job_state_is "$keeps" failed
[ "$(job_field "$keeps" '.tasks[0].exitCode')" = 7 ] || fail "the adopted task's exit code should be reported: $(job_json "$keeps" | jq -c .tasks)"
for id in "$keeps" "$ends"; do
  [ "$(job_field "$id" .attempt)" = 1 ] && [ "$(job_field "$id" .restarts)" = 0 ] || fail "job $id should have run once: $(job_json "$id" | jq -c '{attempt, restarts}')"
  job_json "$id" | jq -r '.events[].type' | grep -q JobRequeued && fail "job $id should not be requeued"
done
for tag in keeps ends cancelled; do [ "$(wc -l <"$WORK/starts-$tag")" = 1 ] || fail "$tag started $(wc -l <"$WORK/starts-$tag") times"; done
log "agent restart: 2 tasks adopted, 1 exit reported from while no agent ran, 1 cancelled task stopped; none started twice"

# `tessera up`, the whole cluster in one process, killed with -9 and started again.
start_up 1 2
kill -9 "${AGENT_PID[n1]}" "$SERVER_PID"
up=$(job up 3)
wait_until 20 job_state_is "$up" running
wait_until 10 test -s "$WORK/starts-up"
kill -9 "$UP_PID"
log "kill -9 of tessera up under job $up"
start_up 1 2
wait_until 20 job_state_is "$up" running
[ "$(job_field "$up" .attempt)" = 1 ] || fail "job $up should run its first attempt still: $(job_json "$up" | jq -c '{attempt, events: [.events[].type]}')"
touch "$WORK/go-up"
wait_until 20 job_state_is "$up" failed
[ "$(job_field "$up" '.tasks[0].exitCode')" = 3 ] && [ "$(job_field "$up" .restarts)" = 0 ] || fail "job $up: $(job_json "$up" | jq -c '{restarts, tasks}')"
[ "$(wc -l <"$WORK/starts-up")" = 1 ] || fail "job $up started $(wc -l <"$WORK/starts-up") times"
log "tessera up restart: the running job carried on and ended once"
