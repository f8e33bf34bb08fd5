#!/usr/bin/env bash
# Cooperative migration: `tessera nodes drain` on a job with a checkpoint
# contract sends it the checkpoint signal; it saves its step to the shared
# TESSERA_CHECKPOINT_DIR, reports it (touches TESSERA_CHECKPOINT_FILE) and
# carries on, as a trainer that checkpoints on a signal does; the report ends
# its two-minute grace at once (SIGTERM), and it is restarted on the other
# node without using up a restart, and resumes from that step.
source "$(dirname "$0")/lib.sh" "$1"

start_server
start_agent node-a 1 --checkpoint-dir "$WORK/shared-checkpoints"
start_agent node-b 1 --checkpoint-dir "$WORK/shared-checkpoints"
wait_until 20 nodes_ready 2
"$TESSERA" nodes cordon node-b >/dev/null  # start on node-a

cat >"$WORK/train.py" <<'PY'
import os, pathlib, signal, sys, time
ckpt = pathlib.Path(os.environ["TESSERA_CHECKPOINT_DIR"]) / "step"
step = int(ckpt.read_text()) if ckpt.exists() else 0
print(f"attempt {os.environ['TESSERA_ATTEMPT']} on {os.environ['TESSERA_NODE_NAME']} resumes at step {step}", flush=True)
def save(signum, frame):
    ckpt.write_text(str(step))
    pathlib.Path(os.environ["TESSERA_CHECKPOINT_FILE"]).touch()
    print(f"checkpointed at step {step}", flush=True)
def stop(signum, frame):
    print(f"stopped at step {step}", flush=True)
    sys.exit(0)
signal.signal(signal.SIGUSR1, save)
signal.signal(signal.SIGTERM, stop)
while True:
    step += 1
    time.sleep(0.1)
PY
cat >"$WORK/train.yaml" <<YAML
apiVersion: tessera/v1
kind: Job
metadata: {name: migrating}
spec:
  checkpoint: {signal: SIGUSR1, gracePeriod: 120s}
  tasks: [{name: main, resources: {gpus: 1}, command: [python3, -u, "$WORK/train.py", "e2e-$$"]}]
YAML
job=$(submit "$WORK/train.yaml")
wait_until 20 job_state_is "$job" running
wait_until 20 bash -c "'$TESSERA' logs $job | grep -q 'resumes at step 0'"
sleep 1
"$TESSERA" nodes uncordon node-b >/dev/null
"$TESSERA" nodes drain node-a >/dev/null
# Stopped within 30 s of the drain: the report ended the two-minute grace.
wait_until 30 bash -c "'$TESSERA' logs $job --attempt 1 | grep -q 'stopped at step'"
wait_until 30 bash -c "[ \"\$('$TESSERA' describe -o json $job | jq -r '.attempt, .state' | paste -sd' ')\" = '2 running' ]"
[ "$(job_field "$job" '.tasks[0].node')" = node-b ] || fail "the run moved to node-b"
[ "$(job_field "$job" .restarts)" = 0 ] || fail "a drain uses up no restart"
saved=$(cat "$WORK/shared-checkpoints/$job/step")
[ "$saved" -gt 0 ] || fail "the checkpoint holds a step: '$saved'"
"$TESSERA" logs "$job" --attempt 1 | grep -q "checkpointed at step $saved" || fail "attempt 1 checkpointed: $("$TESSERA" logs "$job" --attempt 1)"
wait_until 20 bash -c "'$TESSERA' logs $job | grep -q 'attempt 2 on node-b resumes at step $saved'"
grep -q "signal 10 to checkpoint" "$WORK/node-a.log" || fail "the agent says it asked for a checkpoint"
grep -q "checkpoint reported; SIGTERM now" "$WORK/node-a.log" || fail "the agent says the report ended the grace"
log "drained: checkpointed at step $saved on node-a, resumed at it on node-b"
# Several nodes in one command: -o json answers with their objects.
states=$("$TESSERA" nodes cordon node-a node-b -o json | jq -r '.[].state' | paste -sd' ')
[ "$states" = "cordoned cordoned" ] || fail "cordoning both nodes in one command answered '$states'"
