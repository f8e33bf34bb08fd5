#!/usr/bin/env bash
# `tessera whatif` on a real server's recorded history: four 1-GPU jobs run
# on a 2-GPU agent; replayed with a proposed queue limit of 1 GPU they wait
# longer, which a --fail-if threshold turns into exit code 1; bad proposals
# and thresholds are refused with exit code 2 before anything is replayed.
source "$(dirname "$0")/lib.sh" "$1"

start_server
start_agent n1 2
wait_until 20 nodes_ready 1
ids=()
for i in 1 2 3 4; do
  printf 'apiVersion: tessera/v1\nkind: Job\nmetadata: {name: w%s}\nspec:\n  tasks: [{name: m, resources: {gpus: 1}, command: [sleep, "2"]}]\n' "$i" >"$WORK/w$i.yaml"
  ids+=("$(submit "$WORK/w$i.yaml")")
done
succeeded() { for id in "${ids[@]}"; do job_state_is "$id" succeeded || return 1; done; }
wait_until 60 succeeded

cat >"$WORK/queues.yaml" <<'Q'
apiVersion: tessera/v1
kind: QueueTree
spec:
  queues:
    - {name: default, guaranteed: 0, limit: 1}
Q
out=$("$TESSERA" whatif --queues "$WORK/queues.yaml" --since 1h -o json)
[ "$(jq .replayedJobs <<<"$out")" = 4 ] || fail "expected the 4 recorded jobs replayed: $out"
[ "$(jq .running.jobs <<<"$out")" = 4 ] && [ "$(jq .proposed.jobs <<<"$out")" = 4 ] || fail "every replayed job should finish in both runs: $out"
jq -e '.proposed.avg_wait_s > .running.avg_wait_s' <<<"$out" >/dev/null ||
  fail "one GPU instead of two should make the jobs wait longer: $(jq -c '[.running.avg_wait_s, .proposed.avg_wait_s]' <<<"$out")"
log "whatif: avg wait $(jq .running.avg_wait_s <<<"$out") s running, $(jq .proposed.avg_wait_s <<<"$out") s with a 1-GPU limit"

"$TESSERA" whatif --queues "$WORK/queues.yaml" --since 1h | grep -q "^avg_wait_s" || fail "the table has no avg_wait_s row"
set +e
"$TESSERA" whatif --queues "$WORK/queues.yaml" --since 1h --fail-if 'avg_wait_s>+10%' >/dev/null 2>"$WORK/breach.err"
code=$?
"$TESSERA" whatif --queues "$WORK/queues.yaml" --since 1h --fail-if 'avg_wait_s>+1000000%' >/dev/null 2>&1
loose=$?
"$TESSERA" whatif --queues "$WORK/queues.yaml" --fail-if 'avg_wait_s>10%' >/dev/null 2>"$WORK/bad.err"
bad=$?
"$TESSERA" whatif >/dev/null 2>"$WORK/none.err"
none=$?
set -e
[ "$code" = 1 ] || fail "a breached threshold should exit 1, got $code"
grep -q "avg_wait_s>+10%: the proposal gives" "$WORK/breach.err" || fail "the breach is not named: $(cat "$WORK/breach.err")"
[ "$loose" = 0 ] || fail "a threshold the proposal keeps should exit 0, got $loose"
[ "$bad" = 2 ] && grep -q "write +10% or -10%" "$WORK/bad.err" || fail "a malformed threshold should exit 2 with a hint, got $bad: $(cat "$WORK/bad.err")"
[ "$none" = 2 ] && grep -q "nothing proposed" "$WORK/none.err" || fail "whatif without a proposal should exit 2, got $none"
log "whatif: thresholds decide the exit code (1 breached, 0 kept, 2 malformed)"
