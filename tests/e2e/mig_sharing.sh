#!/usr/bin/env bash
# MIG on a live cluster (docs/gpu-sharing.md, "MIG"): one agent whose fake
# GPU 0 is in MIG mode with two 1g.10gb devices and a 3g.40gb one, beside
# three whole GPUs. Two 1g.10gb tasks run at once, each seeing only its own
# device by UUID; a third waits for one of them; a 3-GPU job runs beside them
# on the whole GPUs and a 1-GPU job cannot have GPU 0; a profile no node has
# is refused at submission, naming the profiles there are.
source "$(dirname "$0")/lib.sh" "$1"

start_server
FAKE_GPU_EXTRA='mig: {0: [1g.10gb, 1g.10gb, 3g.40gb]}' start_agent solo 4
wait_until 20 nodes_ready 1


release="$WORK/release"
mig_job() {  # NAME PROFILE
  submit --name "$1" --mig "$2" -- \
    sh -c 'echo visible=$CUDA_VISIBLE_DEVICES sharing=$TESSERA_GPU_SHARING; until [ -e "$0" ]; do sleep 0.1; done' "$release" "e2e-$$"
}
a=$(mig_job small-a 1g.10gb)
b=$(mig_job small-b 1g.10gb)
big=$(mig_job big 3g.40gb)
whole=$("$TESSERA" submit -o json --name whole --gpus 3 -- sh -c "until [ -e $release ]; do sleep 0.1; done" "e2e-$$" | jq -r '.jobs[0].id')
# Last: waiting at the head of the queue, it would hold the node for itself.
c=$(mig_job small-c 1g.10gb)
wait_until 30 job_state_is "$a" running
wait_until 30 job_state_is "$b" running
wait_until 30 job_state_is "$big" running
wait_until 30 job_state_is "$whole" running
job_state_is "$c" pending || fail "a third 1g.10gb task must wait: $(job_json "$c")"

inventory=$("$TESSERA" nodes -o json | jq -c '.nodes[0].gpus[0].mig')
[ "$(jq -c '[.[].profile]' <<<"$inventory")" = '["1g.10gb","1g.10gb","3g.40gb"]' ] || fail "the node should list GPU 0's MIG devices: $inventory"
[ "$(jq '[.[] | select(.used)] | length' <<<"$inventory")" -eq 3 ] || fail "all three devices should be held: $inventory"
device_of() { job_field "$1" '.tasks[0].migDevice'; }
da=$(device_of "$a") db=$(device_of "$b") dbig=$(device_of "$big")
[ "$da" != "$db" ] || fail "two tasks got one MIG device: $da"
for d in "$da" "$db" "$dbig"; do
  [[ "$d" == MIG-* ]] || fail "a MIG task should name its device by UUID, got '$d'"
  jq -e --arg d "$d" 'any(.[]; .uuid == $d)' <<<"$inventory" >/dev/null || fail "$d is none of the node's devices: $inventory"
done
[ "$(job_field "$whole" '[.tasks[0].gpus[]] | sort | join(",")')" = "1,2,3" ] || fail "the whole GPUs are 1-3: $(job_json "$whole")"
wait_until 20 eval '"$TESSERA" logs "$a" | grep -q "visible=$da sharing=mig"'
"$TESSERA" describe "$a" | grep -q "(MIG $da)" || fail "describe should show the MIG device: $("$TESSERA" describe "$a")"

# A whole GPU more does not exist: GPU 0 is MIG devices only.
one=$("$TESSERA" submit -o json --name one --gpus 1 -- true | jq -r '.jobs[0].id')
wait_until 20 eval '[[ "$(job_field "$one" .message)" == waiting:* ]]'
job_state_is "$one" pending || fail "GPU 0 must not stand in for a whole GPU: $(job_json "$one")"

# A profile no node has: refused at once, with the profiles there are.
cat >"$WORK/odd.yaml" <<YAML
apiVersion: tessera/v1
kind: Job
metadata: {name: odd}
spec: {tasks: [{name: m, resources: {mig: 2g.20gb}, command: ['true']}]}
YAML
out=$("$TESSERA" submit "$WORK/odd.yaml" 2>&1) && fail "a profile no node has should be refused: $out"
grep -q "resources.mig: no node has a MIG device of profile 2g.20gb (the cluster's profiles: 1g.10gb, 3g.40gb)" <<<"$out" ||
  fail "the refusal should name the profiles there are: $out"

"$TESSERA" cancel "$a" >/dev/null
wait_until 30 job_state_is "$c" running
[ "$(device_of "$c")" = "$da" ] || fail "the third task should take the device the first left: $(device_of "$c"), expected $da"
touch "$release"
for j in "$b" "$c" "$big" "$whole"; do wait_until 30 job_state_is "$j" succeeded; done
log "two 1g.10gb tasks and a 3g.40gb beside a 3-GPU job on one node; the third 1g.10gb took $da after the first"
