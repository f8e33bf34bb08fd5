#!/usr/bin/env bash
# Job arrays end to end on `tessera up` (one process: server and two agents
# with fake GPUs, TLS and tokens): an array of ten single-GPU elements with a
# limit of two, each printing its TESSERA_ARRAY_INDEX. Never more than two
# elements run at once; one element is cancelled before it starts and one
# while it runs (`tessera cancel ID[INDEX]`); the others' logs hold their
# indices; `tessera jobs` shows the array as one line with its counts and
# `--expand` its elements; a sweep's elements get their parameters.
source "$(dirname "$0")/lib.sh" "$1"

start_up 2 4 --fake

# Index 3 runs until cancelled; the others print their index and end after a moment.
id=$(submit --name shards --gpus 1 --array 0-9%2 -- sh -c "
  echo index=\$TESSERA_ARRAY_INDEX array=\$TESSERA_ARRAY_JOB_ID count=\$TESSERA_ARRAY_COUNT e2e-$$
  if [ \$TESSERA_ARRAY_INDEX = 3 ]; then exec sleep 1000; fi
  sleep 0.5")
"$TESSERA" cancel "$id[9]" | grep -q "job $id\[9\] (shards) cancelled" || fail "cancelling an element that has not started should confirm"
[ "$(job_field "$id[9]" .state)" = cancelled ] || fail "$id[9] should be cancelled before it started"

# While it runs: at most two elements at once, and one line in `tessera jobs`.
most=0
counts() { job_json "$id" | jq -c .array.counts; }
running_is() { [ "$(job_json "$id" | jq .array.counts.running)" = "$1" ]; }
poll_until_3_runs() {
  local running
  running=$(job_json "$id" | jq .array.counts.running)
  [ "$running" -gt "$most" ] && most=$running
  [ "$(job_field "$id[3]" .state)" = running ]
}
wait_until 60 poll_until_3_runs
[ "$("$TESSERA" jobs | grep -c shards)" = 1 ] || fail "tessera jobs should show the array on one line: $("$TESSERA" jobs)"
"$TESSERA" jobs | grep shards | grep -q "0-9%2: " || fail "tessera jobs should show the array's indices and counts: $("$TESSERA" jobs)"
"$TESSERA" cancel "$id[3]" >/dev/null
no_sleeper() { ! pgrep -x -f 'sleep 1000' >/dev/null; }
wait_until 10 no_sleeper
ended() { case $(job_field "$id" .state) in cancelled | succeeded | failed) return 0 ;; *) poll_until_3_runs || true; return 1 ;; esac; }
wait_until 90 ended
[ "$most" -le 2 ] || fail "$most elements ran at once; the array's limit is 2"
log "array $id: at most $most elements at once, $(counts)"

# Eight succeeded, two cancelled (one running, one before it started): the array is cancelled.
[ "$(counts)" = '{"cancelled":2,"failed":0,"pending":0,"running":0,"succeeded":8}' ] || fail "wrong counts: $(counts)"
[ "$(job_field "$id" .state)" = cancelled ] || fail "an array with cancelled elements and no failed ones ends cancelled"
"$TESSERA" jobs --all | grep shards | grep -q "8 succeeded, 2 cancelled" || fail "tessera jobs --all: $("$TESSERA" jobs --all)"
[ "$("$TESSERA" jobs --all --expand | grep -c "^$id\[")" = 10 ] || fail "--expand should list ten elements: $("$TESSERA" jobs --all --expand)"
for i in 0 1 2 4 5 6 7 8; do
  out=$("$TESSERA" logs "$id[$i]")
  [[ "$out" == *"index=$i array=$id count=10"* ]] || fail "$id[$i] printed '$out'"
done
"$TESSERA" describe "$id" | grep -q "^Array: *0-9%2 (10 elements, at most 2 at a time)" || fail "describe should show the array: $("$TESSERA" describe "$id")"
"$TESSERA" describe "$id[7]" | grep -q "^Job: *$id\[7\] (shards)" || fail "describe ID[INDEX]: $("$TESSERA" describe "$id[7]")"
"$TESSERA" logs "$id" 2>"$WORK/err" && fail "an array's own logs should be refused"
grep -q "is an array: its elements have the logs" "$WORK/err" || fail "logs of an array should say why: $(cat "$WORK/err")"
"$TESSERA" cancel "$id[12]" 2>"$WORK/err" && fail "an index outside the array should be refused"
grep -q "array $id has no index 12 (its indices: 0-9)" "$WORK/err" || fail "a bad index should be named: $(cat "$WORK/err")"
log "element logs hold their indices; describe, logs and cancel take ID[INDEX]"

# A sweep: every combination, each element with its parameters.
cat >"$WORK/sweep.yaml" <<YAML
apiVersion: tessera/v1
kind: Job
metadata: {name: sweep}
spec:
  sweep: {lr: [0.1, 0.01], batch: {from: 32, to: 64, step: 32}}
  tasks: [{name: main, command: [sh, -c, 'echo lr=\$TESSERA_SWEEP_LR batch=\$TESSERA_SWEEP_BATCH index=\$TESSERA_ARRAY_INDEX']}]
YAML
sweep=$(submit "$WORK/sweep.yaml")
wait_until 60 job_state_is "$sweep" succeeded
want=("lr=0.1 batch=32 index=0" "lr=0.1 batch=64 index=1" "lr=0.01 batch=32 index=2" "lr=0.01 batch=64 index=3")
for i in 0 1 2 3; do
  [ "$("$TESSERA" logs "$sweep[$i]")" = "${want[$i]}" ] || fail "sweep element $i printed '$("$TESSERA" logs "$sweep[$i]")'"
done
log "sweep $sweep: four combinations, each in its element's environment"
