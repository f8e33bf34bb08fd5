#!/usr/bin/env bash
# The scheduler's quota and backfill rules through a real server and agent
# (fidelity: what the core and the simulator prove, on a live cluster).
#  1. Reclaim: team-b borrows team-a's idle guarantee; when team-a submits,
#     the borrowed runs are evicted ("reclaimed") and team-a's jobs run.
#  2. Backfill: a 4-GPU gang waits for a 2-GPU run that ends in ~8 s; a
#     1-GPU job that declares it ends sooner runs in the gap, a 1-GPU job
#     that would delay the gang waits, and the gang starts when the run ends.
source "$(dirname "$0")/lib.sh" "$1"

start_server
start_agent n1 4
wait_until 20 nodes_ready 1
"$TESSERA" queues set team-a --guaranteed 2 >/dev/null
"$TESSERA" queues set team-b --guaranteed 2 >/dev/null

job() {  # job NAME QUEUE GPUS SECONDS [WALLTIME]: a one-task job that sleeps
  {
    printf 'apiVersion: tessera/v1\nkind: Job\nmetadata: {name: %s, queue: %s}\nspec:\n' "$1" "$2"
    [ -z "${5:-}" ] || printf '  walltime: %s\n' "$5"
    printf '  tasks: [{name: m, resources: {gpus: %s}, command: [sleep, "%s"]}]\n' "$3" "$4"
  } >"$WORK/$1.yaml"
  submit "$WORK/$1.yaml"
}
running() { for id in "$@"; do job_state_is "$id" running || return 1; done; }

# --- 1. reclaim -------------------------------------------------------------------
b=()
for i in 1 2 3 4; do b+=("$(job "b$i" team-b 1 600)"); done
wait_until 60 running "${b[@]}"  # all four: two of them on team-a's idle guarantee
a1=$(job a1 team-a 1 600)
a2=$(job a2 team-a 1 600)
wait_until 60 running "$a1" "$a2"
reclaimed=0
for id in "${b[@]}"; do
  if job_state_is "$id" pending; then
    "$TESSERA" describe "$id" | grep -q "JobPreempted.*reclaimed by job" || fail "b job $id was not reclaimed: $("$TESSERA" describe "$id")"
    reclaimed=$((reclaimed + 1))
  fi
done
[ "$reclaimed" -eq 2 ] || fail "team-b should have given back exactly the 2 GPUs it borrowed, gave back $reclaimed"
log "reclaim: team-a got its 2 GPUs back from team-b's borrowed runs"
"$TESSERA" cancel "${b[@]}" "$a1" "$a2" >/dev/null
gpus_free() { [ "$("$TESSERA" nodes -o json | jq '[.nodes[].allocatedGpus] | add')" = 0 ]; }
wait_until 30 gpus_free

# --- 2. backfill ------------------------------------------------------------------
run=$(job run team-a 2 8 10s)
wait_until 30 running "$run"
gang=$(job gang team-a 4 600 1h)
short=$(job short team-a 1 3 5s)  # ends before the run does: it may use the gap
long=$(job long team-a 1 600 1h)  # would keep a GPU the gang needs
started() { [ "$(job_field "$1" .scheduledTime)" -gt 0 ]; }
wait_until 30 started "$short"
job_state_is "$gang" pending || fail "the gang cannot fit yet, but is $(job_field "$gang" .state)"
job_state_is "$long" pending || fail "the long job would delay the gang, but is $(job_field "$long" .state)"
wait_until 60 running "$gang"
job_state_is "$long" pending || fail "the long job should still wait, behind the gang"
[ "$(job_field "$short" .scheduledTime)" -lt "$(job_field "$run" .endTime)" ] || fail "the short job did not run in the gap"
late_ms=$(( $(job_field "$gang" .scheduledTime) - $(job_field "$run" .endTime) ))
[ "$late_ms" -lt 3000 ] || fail "the gang started ${late_ms} ms after the run it waited for ended: backfill delayed it"
log "backfill: the short job ran in the gap; the gang started ${late_ms} ms after the run ended, the long job still waits"
