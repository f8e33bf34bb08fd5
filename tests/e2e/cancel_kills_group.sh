#!/usr/bin/env bash
# Cancelling a running job stops its whole process group: the task's shell,
# a child it started in the background, and one that ignores SIGTERM (killed
# after the grace period).
source "$(dirname "$0")/lib.sh" "$1"

start_server
start_agent n1 2
wait_until 20 nodes_ready 1

pids="$WORK/pids"
id=$(submit --name stubborn --gpus 1 -- sh -c "
  sleep 1000 & echo \$! >> $pids
  (trap '' TERM; exec sleep 1001) & echo \$! >> $pids
  echo \$\$ >> $pids
  wait")
wait_until 20 job_state_is "$id" running
wait_until 10 test "$(wc -l < "$pids" 2>/dev/null || echo 0)" -eq 3
for p in $(cat "$pids"); do kill -0 "$p" || fail "process $p should be running"; done

"$TESSERA" cancel "$id" | grep -q "job $id (stubborn) cancelled" || fail "cancel should confirm"
job_state_is "$id" cancelled || fail "the job should be cancelled at once"
all_gone() { for p in $(cat "$pids"); do ! kill -0 "$p" 2>/dev/null || return 1; done; }
wait_until 10 all_gone
log "all 3 processes of the group are gone (grace 2 s)"
# Its GPU is free again.
[ "$("$TESSERA" nodes -o json | jq '.nodes[0].allocatedGpus')" = "0" ] || fail "the GPU should be free"
"$TESSERA" cancel "$id" 2>"$WORK/err" && fail "cancelling twice should fail"
grep -q "already ended (cancelled)" "$WORK/err" || fail "the second cancel should say why: $(cat "$WORK/err")"
