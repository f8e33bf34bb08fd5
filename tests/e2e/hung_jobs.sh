#!/usr/bin/env bash
# Hung-job detection (spec.hangDetection): a gang whose task stops touching
# TESSERA_PROGRESS_FILE is stopped and restarted after its backoff, and
# fails once its restarts are used up; a job whose GPUs sit idle past gpuIdleTimeout is reported and
# left running when its action is `report`.
source "$(dirname "$0")/lib.sh" "$1"

start_server
start_agent hang-node 4
wait_until 20 nodes_ready 1

cat >"$WORK/stuck.yaml" <<YAML
apiVersion: tessera/v1
kind: Job
metadata: {name: stuck-allreduce}
spec:
  hangDetection: {progressTimeout: 3s, action: restart}
  restart: {maxRestarts: 1, backoff: 2s}
  tasks:
    - name: worker
      replicas: 2
      resources: {gpus: 1}
      command: [python3, -c, "import os, pathlib, time\np = pathlib.Path(os.environ['TESSERA_PROGRESS_FILE'])\nfor step in range(4):\n    p.touch(); time.sleep(0.5)\ntime.sleep(600)  # e2e-$$"]
YAML
stuck=$(submit "$WORK/stuck.yaml")
wait_until 30 job_state_is "$stuck" failed
job_field "$stuck" .message | grep -q "hung: task worker-[01] on hang-node showed no progress for [0-9]*s" ||
  fail "the message says why: $(job_field "$stuck" .message)"
[ "$(job_field "$stuck" .restarts)" = 1 ] || fail "one restart was used: $(job_json "$stuck")"
[ "$(curl -s "$SERVER_URL/v1/events?since=0&job=$stuck" | jq '[.events[] | select(.type == "JobHung")] | length')" = 2 ] ||
  fail "one JobHung event per run"
gap=$(curl -s "$SERVER_URL/v1/events?since=0&job=$stuck" |
  jq '[.events[] | select(.type == "JobRequeued" or .type == "JobScheduled") | .time] | .[2] - .[1]')
[ "$gap" -ge 2000 ] || fail "the restart waited out its 2s backoff: ${gap} ms"
log "the stuck gang was restarted once, ${gap} ms after it was stopped, then failed"

cat >"$WORK/idle.yaml" <<YAML
apiVersion: tessera/v1
kind: Job
metadata: {name: waiting-for-data}
spec:
  hangDetection: {gpuIdleTimeout: 3s}
  tasks: [{name: main, resources: {gpus: 1}, command: [sleep, "600"]}]
YAML
idle=$(submit "$WORK/idle.yaml")
wait_until 30 bash -c "curl -s '$SERVER_URL/v1/events?since=0&job=$idle' | jq -e '[.events[].type] | index(\"JobHung\") != null' >/dev/null"
job_state_is "$idle" running || fail "report only: the job keeps running"
job_field "$idle" .message | grep -q "hung: its GPUs have been idle for [0-9]*s" || fail "message: $(job_field "$idle" .message)"
log "the idle job was reported and left running"
