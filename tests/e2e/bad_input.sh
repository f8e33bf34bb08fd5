#!/usr/bin/env bash
# Bad input, through the CLI and the raw API: each gets a precise message and
# the documented exit code, and nothing is left half-written.
source "$(dirname "$0")/lib.sh" "$1"

start_server
start_agent n1 4
wait_until 20 nodes_ready 1

# expect CODE PATTERN COMMAND...: the command exits with CODE and says PATTERN on stderr.
expect() {
  local code=$1 pattern=$2
  shift 2
  set +e
  "$@" >"$WORK/out" 2>"$WORK/err"
  local got=$?
  set -e
  [ "$got" -eq "$code" ] || fail "$* exited $got, want $code: $(cat "$WORK/err")"
  grep -q -- "$pattern" "$WORK/err" || fail "$*: want '$pattern' in: $(cat "$WORK/err")"
}

printf 'apiVersion: tessera/v1\nkind: Job\nmetadata: {name: x\nspec: [\n' >"$WORK/malformed.yaml"
expect 2 "malformed.yaml:.*malformed YAML" "$TESSERA" submit "$WORK/malformed.yaml"
printf 'apiVersion: tessera/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  tasks: [{name: m, command: [a], gpu: 1}]\n' >"$WORK/unknown.yaml"
expect 2 "unknown.yaml:5:.*unknown field 'gpu'" "$TESSERA" submit "$WORK/unknown.yaml"
expect 2 "9 GPUs per task, but the largest node has 4" "$TESSERA" submit --gpus 9 -- true
expect 2 "unknown queue 'nope'" "$TESSERA" submit --queue nope -- true
expect 2 "gpuMemory is memory on a GPU, but gpus is 0" "$TESSERA" submit --gpu-memory 10Gi -- true
expect 2 "unknown command 'job'; did you mean 'jobs'?" "$TESSERA" job
set +e
"$TESSERA" >"$WORK/out" 2>&1
got=$?
set -e
[ "$got" -eq 2 ] || fail "tessera alone exited $got, want 2"
grep -q "submit .*Submit jobs" "$WORK/out" || fail "tessera alone should print the commands: $(cat "$WORK/out")"
expect 2 "nothing to submit" "$TESSERA" submit
expect 4 "no job 999" "$TESSERA" describe 999
expect 4 "no job 999" "$TESSERA" cancel 999
expect 2 "job: 'abc' is not a job id (12) or an array element (12\[3\])" "$TESSERA" logs abc
expect 2 "spec.array: range 9-0 runs backwards: write 0-9" "$TESSERA" submit --array 9-0 -- true
expect 4 "no job 999" "$TESSERA" describe '999[1]'
expect 3 "cannot reach the Tessera server" "$TESSERA" jobs --server http://127.0.0.1:1

# The raw API.
code() { curl -s -o "$WORK/body" -w '%{http_code}' "$@"; }
[ "$(code -X POST -H 'Content-Type: application/json' --data '{"apiVersion":' "$SERVER_URL/v1/jobs")" = 400 ] || fail "malformed JSON"
grep -q "malformed JSON" "$WORK/body" || fail "malformed JSON message: $(cat "$WORK/body")"
head -c 2000000 /dev/zero | tr '\0' 'x' >"$WORK/big"
[ "$(code -X POST --data-binary @"$WORK/big" "$SERVER_URL/v1/jobs")" = 413 ] || fail "oversized body should be 413"
# The CLI reports that answer too, though the server gives it before the 20 MB are sent.
python3 -c 'print("apiVersion: tessera/v1\nkind: Job\nmetadata: {name: big}\nspec:\n  tasks: [{name: m, command: [a]}]\n" + ("#" * 99 + "\n") * 200000)' >"$WORK/big.yaml"
expect 2 "request body exceeds the limit of 1048576 bytes" "$TESSERA" submit "$WORK/big.yaml"
[ "$(code -X POST --data '{"name":"n9","gpus":[{"index":0,"model":"H100","memory":1,"colour":"red"}]}' "$SERVER_URL/v1/nodes/n9/register")" = 400 ] || fail "agent inventory with an unknown field"
grep -q "gpus\[0\].colour: unknown field" "$WORK/body" || fail "inventory message: $(cat "$WORK/body")"
[ "$(code "$SERVER_URL/v1/nope")" = 404 ] || fail "unknown path"
[ "$(code -X PUT "$SERVER_URL/v1/jobs")" = 405 ] || fail "wrong method"
# What the fuzzer found (tests/fuzz), each of which once stopped or hung the server.
[ "$(code -X PUT --data '{"guaranteed": 1e999}' "$SERVER_URL/v1/queues/q")" = 400 ] || fail "a number too large for a double"
grep -q "number overflow" "$WORK/body" || fail "number overflow message: $(cat "$WORK/body")"
[ "$(code "$SERVER_URL/v1/%84%ff")" = 404 ] || fail "a path that is not UTF-8"
jq -e .error "$WORK/body" >/dev/null || fail "the 404 for a path that is not UTF-8 is JSON: $(cat "$WORK/body")"
for body in ',' '"q",' '[1],2'; do
  [ "$(code -m 5 -X POST -H 'Content-Type: application/yaml' --data "$body" "$SERVER_URL/v1/jobs")" = 400 ] || fail "YAML '$body' is refused at once"
  grep -Eq "malformed YAML|expected a mapping" "$WORK/body" || fail "YAML '$body': $(cat "$WORK/body")"
done

# Nothing was accepted, and the server still works.
[ "$("$TESSERA" jobs -a -o json | jq '.jobs | length')" -eq 0 ] || fail "bad submissions left jobs behind"
[ "$("$TESSERA" nodes -o json | jq '.nodes | length')" -eq 1 ] || fail "a bad registration left a node behind"
id=$(submit --gpus 1 -- true)
wait_until 20 job_state_is "$id" succeeded
log "every bad input was refused with its reason; the server still runs jobs"
