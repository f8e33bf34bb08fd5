#!/usr/bin/env bash
# tessera sbatch end to end: every directive of the corpus (tests/sbatch/corpus)
# is accepted; every corpus script runs on a 3-node cluster of fake 4-GPU
# agents, all at once, and its output (the batch step's log: SLURM_* values,
# srun's ranks across nodes) matches the "# expect:" lines it carries, with
# the exit code of "# expect-exit:" (0 by default); a script with "#
# expect-array: INDICES" is an array, each element's output checked; -o/-e
# files, --wrap, dependencies (afterok, afternotok, afterany, singleton) and
# refusals.
source "$(dirname "$0")/lib.sh" "$1"
CORPUS=$(cd "$E2E_DIR/../sbatch/corpus" && pwd)

start_server
for n in n1 n2 n3; do start_agent "$n" 4; done
wait_until 20 nodes_ready 3
RUN=$WORK/run
mkdir -p "$RUN/work14"
cd "$RUN"

# 1. Every directive line is accepted (the translated Job is printed, nothing submitted).
directives=0
for f in "$CORPUS"/*.sh; do
  "$TESSERA" sbatch --dry-run "$f" >"$WORK/dry-$(basename "$f").json" 2>"$WORK/dry.err" || fail "$(basename "$f") refused: $(cat "$WORK/dry.err")"
  directives=$((directives + $(grep -c '^#SBATCH' "$f")))
done
scripts=$(ls "$CORPUS"/*.sh | wc -l)
[ "$scripts" -ge 20 ] || fail "the corpus should hold at least 20 scripts, has $scripts"
log "all $directives directives of $scripts scripts accepted"
jq -e '.spec.tasks[0].onePerNode == true and .spec.tasks[0].replicas == 3' "$WORK/dry-19_three_nodes.sh.json" >/dev/null ||
  fail "a 3-node allocation should be 3 tasks, one per node: $(cat "$WORK/dry-19_three_nodes.sh.json")"

# 2. Every script runs, all submitted at once.
export CORPUS_MARKER=from-submitter
declare -A ID
for f in "$CORPUS"/*.sh; do
  name=$(basename "$f")
  args=()
  [ "$name" = 24_script_args.sh ] && args=(--lr 3e-4)
  ID[$name]=$("$TESSERA" sbatch --parsable "$f" "${args[@]}") || fail "$name was not submitted"
done
# A second link of the singleton chain waits for the first.
second_singleton=$("$TESSERA" sbatch --parsable "$CORPUS/18_singleton.sh")
# --wrap, and the sbatch-style answer.
wrap_answer=$("$TESSERA" sbatch -J wrapped -o wrapped-%j.out --wrap "echo wrapped on \$SLURMD_NODENAME")
[[ "$wrap_answer" =~ ^Submitted\ batch\ job\ ([0-9]+)$ ]] || fail "sbatch should answer like Slurm's: '$wrap_answer'"
wrap_id=${BASH_REMATCH[1]}
# Dependencies by id, between jobs of one name.
ok=$("$TESSERA" sbatch --parsable -J chain --wrap "exit 0")
bad=$("$TESSERA" sbatch --parsable -J chain --wrap "exit 1")
after_ok=$("$TESSERA" sbatch --parsable -J chain -d "afterok:$ok" --wrap "echo after ok")
after_any=$("$TESSERA" sbatch --parsable -J chain -d "afterany:$bad" --wrap "echo after any")
after_notok=$("$TESSERA" sbatch --parsable -J chain -d "afternotok:$bad" --wrap "echo after not ok")
never=$("$TESSERA" sbatch --parsable -J chain -d "afternotok:$ok" --wrap "echo never")
log "submitted ${#ID[@]} corpus jobs and 7 more"

# One listing per poll: under the sanitizers each CLI start takes 0.7 s.
ended() {
  "$TESSERA" jobs -o json --all | jq -e --argjson ids "$(printf '%s\n' "$@" | jq -s .)" \
    '[.jobs[] | select(.id as $id | $ids | index($id)) | select(.state | IN("succeeded", "failed", "cancelled"))] | length == ($ids | length)' >/dev/null
}
wait_until 150 ended "${ID[@]}" "$second_singleton" "$wrap_id" "$ok" "$bad" "$after_ok" "$after_any" "$after_notok"

# The batch step's output, once the last of it reached the server; an
# array's is its elements', each its own job ID[INDEX].
all_jobs=$("$TESSERA" jobs -o json --all --expand)
stdout_of() {  # an array's elements' output in index order
  local elements
  elements=$(jq -r --argjson id "$1" '.jobs[] | select(.arrayJobId == $id) | .arrayIndex' <<<"$all_jobs")
  if [ -z "$elements" ]; then
    "$TESSERA" logs "$1" --task node-0
  else
    for i in $elements; do "$TESSERA" logs "$1[$i]" --task node-0; done
  fi
}
for f in "$CORPUS"/*.sh; do
  name=$(basename "$f")
  id=${ID[$name]}
  want_exit=$(sed -n 's/^# expect-exit: //p' "$f")
  want_exit=${want_exit:-0}
  state=$(jq -r --argjson id "$id" '.jobs[] | select(.id == $id) | .state' <<<"$all_jobs")
  if [ "$want_exit" = 0 ]; then
    [ "$state" = succeeded ] || fail "$name (job $id) should succeed, is $state: $(stdout_of "$id"; "$TESSERA" logs "$id" --task node-0 --stderr)"
  else
    [ "$state" = failed ] || fail "$name (job $id) should fail, is $state"
    code=$(jq --argjson id "$id" '.jobs[] | select(.id == $id) | .tasks[] | select(.name == "node-0") | .exitCode' <<<"$all_jobs")
    [ "$code" = "$want_exit" ] || fail "$name (job $id) should exit $want_exit, exited $code"
  fi
  out=$(stdout_of "$id")
  while IFS= read -r pattern; do
    for _ in $(seq 50); do  # the last lines may trail the end by a heartbeat
      grep -Eq -- "$pattern" <<<"$out" && break
      sleep 0.2
      out=$(stdout_of "$id")
    done
    grep -Eq -- "$pattern" <<<"$out" || fail "$name (job $id): no line matches '$pattern' in: $out"
  done < <(sed -n 's/^# expect: //p' "$f")
done
log "every corpus script ran and printed what it expects"

# -o/-e files, relative to the submit directory (or -D), with their patterns.
grep -qx "to stdout" "logs-split-logs-${ID[07_output_error_files.sh]}.out" || fail "-o file missing or wrong"
grep -qx "to stderr" "logs-split-logs-${ID[07_output_error_files.sh]}.err" || fail "-e file missing or wrong"
grep -q "^job ${ID[01_single_gpu.sh]} on" "single-gpu-${ID[01_single_gpu.sh]}.out" || fail "-o with %j missing"
grep -q "gpus 2 on node" "slurm-${ID[03_gres_typed.sh]}.out" || fail "the default slurm-%j.out is missing"
grep -q "cwd ends in /work14" "work14/slurm-${ID[14_chdir.sh]}.out" || fail "-D should hold the default output file"
grep -q "caught SIGUSR1" "slurm-${ID[06_checkpoint_trap.sh]}.out" || fail "the checkpoint output should be in the file"
grep -q "^wrapped on n" "wrapped-$wrap_id.out" || fail "--wrap output missing"
# An array: one -o file per element (%A_%a), each element its own job, within its limit.
array=${ID[27_array.sh]}
for i in $(sed -n 's/^# expect-array: //p' "$CORPUS/27_array.sh"); do
  element=$(job_field "$array[$i]" .id)
  grep -qx "element $i of array $array (job $element): count 4, min 0, max 6" "array-${array}_$i.out" ||
    fail "array element $i: its -o file array-${array}_$i.out is missing or wrong: $(cat "array-${array}_$i.out" 2>&1)"
done
[ "$(job_json "$array" | jq -c .array.counts)" = '{"cancelled":0,"failed":0,"pending":0,"running":0,"succeeded":4}' ] ||
  fail "the array should have 4 elements succeeded: $(job_json "$array" | jq -c .array)"
starts=$("$TESSERA" jobs -o json --all --expand | jq -r --arg id "$array" \
  '[.jobs[] | select((.arrayJobId | tostring) == $id) | [.scheduledTime, .endTime]] | sort | tojson')
python3 -c 'import json, sys
runs = json.loads(sys.argv[1])
most = max(sum(1 for s, e in runs if s <= t < e) for t, _ in runs)
sys.exit(0 if most <= 2 else "%d elements of the array ran at once; its limit is 2" % most)' "$starts" || fail "the array's %2 limit was not held"
"$TESSERA" logs "${ID[26_time_limit.sh]}" --task node-0 --stderr | grep -q "CANCELLED DUE TO TIME LIMIT" ||
  fail "a job past its time limit should say so in its log"
[ "$(job_field "$second_singleton" .state)" = succeeded ] || fail "the second singleton should have run"
first_end=$(job_json "${ID[18_singleton.sh]}" | jq '[.events[] | select(.type == "JobSucceeded") | .time] | max')
second_start=$(job_json "$second_singleton" | jq '[.events[] | .time] | max')
[ "$second_start" -ge "$first_end" ] || fail "the second singleton ran before the first ended"

# Dependencies.
[ "$(job_field "$after_ok" .state)" = succeeded ] || fail "afterok should run after a success"
[ "$(job_field "$after_any" .state)" = succeeded ] || fail "afterany should run after a failure"
[ "$(job_field "$after_notok" .state)" = succeeded ] || fail "afternotok should run after a failure"
wait_until 10 bash -c "\"$TESSERA\" describe -o json $never | jq -e '.message | test(\"failing, and it succeeded\")' >/dev/null"
[ "$(job_field "$never" .state)" = pending ] || fail "afternotok on a success should never run"
log "dependencies: afterok, afterany, afternotok and singleton hold"

# 3. Refusals: an error naming the file, the line and the option; exit 2.
refused() {  # refused EXPECTED-MESSAGE sbatch-args...
  local want=$1 out status=0
  shift
  out=$("$TESSERA" sbatch "$@" 2>&1) || status=$?
  [ "$status" -eq 2 ] || fail "sbatch $* should exit 2, exited $status: $out"
  [[ "$out" == *"$want"* ]] || fail "sbatch $*: expected '$want' in: $out"
}
printf '#!/bin/bash\n#SBATCH -N 1\n#SBATCH --array=9-0%%2\necho\n' >array.sh
refused "array.sh:3: --array=9-0%2: range 9-0 runs backwards: write 0-9" array.sh
printf '#!/bin/bash\n#SBATCH --mail-type=END --mail-user=a@b.c\necho mailed\n' >mail.sh
refused "mail.sh:2: --mail-type=END: Tessera sends no mail" mail.sh
printf '#!/bin/bash\n#SBATCH -N 3 --gpus=4\necho\n' >uneven.sh
refused "uneven.sh:2: --gpus: 4 GPUs do not divide evenly over 3 nodes" uneven.sh
printf 'echo no shebang\n' >plain.sh
refused "plain.sh:1: the first line must be #!" plain.sh
refused "command line: --dependency: job 99999 does not exist" -d afterok:99999 --wrap true
refused "command line: --time=2h: '2h' is not a Slurm time" -t 2h --wrap true
# --ignore-unknown warns and submits.
out=$("$TESSERA" sbatch --ignore-unknown --parsable mail.sh 2>&1) || fail "--ignore-unknown should submit: $out"
[[ "$out" == *"warning: mail.sh:2: --mail-type=END: Tessera sends no mail"*"; ignored"* ]] || fail "no warning: $out"
log "refusals name the script line and the option"

# 4. Cancelling a running allocation stops srun's tasks on every node.
running=$("$TESSERA" sbatch --parsable -J long -N 2 --gpus-per-node=1 --wrap "srun sleep 61.25")
two_sleeps() { [ "$(pgrep -fc '^sleep 61.25' || true)" -ge 2 ]; }  # the tasks, not their supervisors
wait_until 30 two_sleeps
"$TESSERA" cancel "$running" >/dev/null
wait_until 20 job_state_is "$running" cancelled
no_sleeps() { ! pgrep -f 'sleep 61.25' >/dev/null; }
wait_until 15 no_sleeps
log "a cancelled allocation leaves no step task behind"
