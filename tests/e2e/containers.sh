#!/usr/bin/env bash
# Container tasks end to end (docs/containers.md): a real registry on
# loopback (Debian's docker-registry) holding an image built here, offline,
# from busybox-static; a real server and agent that pull it with skopeo,
# unpack it with umoci and run tasks from it with runc. Checked: logs, exit
# codes, the image's defaults, pull progress as events, the memory limit
# inside the container, the checkpoint signal reaching the container's
# process, a wrong digest and a registry that is down failing with their
# reasons (and the restart policy applied), a private registry pulled with
# the queue's login (whose password shows nowhere), and kill -9 of the agent while a
# container task and a host task run: both carry on and end once.
source "$(dirname "$0")/lib.sh" "$1"

[ "$(id -u)" = 0 ] || { echo "SKIP: containers need root (overlay mounts, runc)"; exit 77; }
for tool in runc skopeo umoci docker-registry; do
  command -v "$tool" >/dev/null || fail "$tool is missing: scripts/install-deps.sh installs it"
done
[ -x /bin/busybox ] || fail "/bin/busybox is missing: scripts/install-deps.sh installs busybox-static"

# The image (scripts/busybox-image.sh): runs `sh -c 'echo ...'` by default,
# as uid 1000, with IMAGE_VAR set.
layout=$WORK/layout
"$E2E_DIR/../../scripts/busybox-image.sh" "$layout" 1 --config.user 1000:1000 --config.env IMAGE_VAR=from-image \
  --config.cmd /bin/sh --config.cmd -c --config.cmd 'echo default cmd as $(id -u) with $IMAGE_VAR'

read -r reg_port private_port < <(free_ports 2)
registry=127.0.0.1:$reg_port
printf 'version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n' "$WORK/registry" "$registry" >"$WORK/registry.yaml"
start_registry() {
  docker-registry serve "$WORK/registry.yaml" >>"$WORK/registry.log" 2>&1 &
  REGISTRY_PID=$!
  PIDS+=("$!")
  disown "$!"
  wait_until 10 curl -sf "http://$registry/v2/" -o /dev/null
}
start_registry
skopeo copy --quiet --dest-tls-verify=false "oci:$layout:1" "docker://$registry/test/busybox:1"
log "registry on $registry holds test/busybox:1"

# A private registry: htpasswd (the bcrypt hash of $password, as in node_image_test).
private=127.0.0.1:$private_port
password=s3cret-pw
printf 'alice:%s\n' '$2b$04$Xs31/LE.Hh7XxWihJgWGh.GHnnfnbzZP9yy4RO1K95Y2PUCvRpQsO' >"$WORK/htpasswd"
printf 'version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\nauth:\n  htpasswd:\n    realm: tessera\n    path: %s\n' \
  "$WORK/private" "$private" "$WORK/htpasswd" >"$WORK/private.yaml"
docker-registry serve "$WORK/private.yaml" >>"$WORK/private.log" 2>&1 &
PIDS+=("$!")
disown "$!"
wait_until 10 bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' http://$private/v2/)\" = 401 ]"
skopeo copy --quiet --dest-tls-verify=false --dest-creds "alice:$password" "oci:$layout:1" "docker://$private/team/busybox:1"

# Whatever happens: containers a killed agent left, and their mounted roots.
CLEANUPS+=("for c in \$(runc --root $WORK/n1/containers/runc list -q 2>/dev/null); do runc --root $WORK/n1/containers/runc delete --force \$c; done; umount -l $WORK/n1/containers/bundles/*/rootfs 2>/dev/null")
start_server --heartbeat-timeout 30
AGENT_CGROUPS=1 start_agent n1 4 --insecure-registry "$registry" --insecure-registry "$private"
wait_until 20 nodes_ready 1
grep -q "containers: runc" "$WORK/n1.log" || fail "the agent should find runc: $(cat "$WORK/n1.log")"

# job NAME TASK-FIELDS [SPEC-FIELDS]: a one-task job from YAML; prints its id.
job() {
  cat >"$WORK/$1.yaml" <<EOF
apiVersion: tessera/v1
kind: Job
metadata: {name: $1}
spec:
  ${3:-}
  tasks:
    - name: main
$(echo "$2" | sed 's/^/      /')
EOF
  submit "$WORK/$1.yaml"
}

# The image's own command, user and environment; output through the logs.
default=$(job default "image: $registry/test/busybox:1")
wait_until 60 job_state_is "$default" succeeded
wait_until 10 bash -c "'$TESSERA' logs $default | grep -qx 'default cmd as 1000 with from-image'"
# The agent reports its image cache; the node shows it.
wait_until 10 bash -c "curl -s $SERVER_URL/v1/nodes/n1 | jq -e '.images[].references | index(\"$registry/test/busybox:1\")' >/dev/null"
job_json "$default" | jq -r '.events[] | select(.type == "TaskPreparing") | .message' | grep -q "pulling $registry/test/busybox:1" ||
  fail "pull progress should show as events: $(job_json "$default" | jq -c '[.events[] | {type, message}]')"

# The private registry: refused without a login, pulled with the queue's.
# The password is in no answer, event, log, audit record or stored byte.
locked=$(job locked "image: $private/team/busybox:1")
wait_until 60 job_state_is "$locked" failed
job_field "$locked" '.tasks[0].message' | grep -q "wants credentials.*tessera queues login QUEUE $private" ||
  fail "a pull without a login should say how to give one: $(job_json "$locked" | jq -c .tasks)"
echo "$password" | "$TESSERA" queues login default "$private" --username alice --password-stdin >/dev/null
"$TESSERA" queues logins | grep -q "^default  *$private  *alice " || fail "the login should be listed: $("$TESSERA" queues logins)"
opened=$(job opened "image: $private/team/busybox:1")
wait_until 60 job_state_is "$opened" succeeded
wait_until 10 bash -c "'$TESSERA' logs $opened | grep -qx 'default cmd as 1000 with from-image'"
for answer in "$("$TESSERA" queues logins -o json)" "$(curl -s "$SERVER_URL/v1/audit")" "$(curl -s "$SERVER_URL/v1/events?since=0")" \
  "$(job_json "$opened")" "$(job_json "$locked")"; do
  case "$answer" in *"$password"*) fail "an answer shows the password: $answer" ;; esac
done
! grep -rqa -- "$password" "$WORK/server" "$WORK/server.log" "$WORK/n1" "$WORK/n1.log" ||
  fail "the password is on disk or in a log: $(grep -rla -- "$password" "$WORK/server" "$WORK/server.log" "$WORK/n1" "$WORK/n1.log")"
"$TESSERA" queues logout default "$private" >/dev/null
[ "$(curl -s "$SERVER_URL/v1/registry-credentials" | jq '.registryCredentials | length')" = 0 ] || fail "logout should remove the login"
log "private registry: refused without a login, pulled with the queue's; the password nowhere in sight"

# GPU sharing inside: a vGPU fraction in a container, as the image's user, is
# held to its cap by the shim the agent binds in. The probe links glibc, so
# the node's libraries are mounted (a CUDA image brings its own).
BIN=$(dirname "$TESSERA")
if [ -x "$BIN/tessera-vgpu-probe" ] && [ -f "$BIN/vgpu-standin/libcuda.so.1" ]; then
  GiB=1073741824
  vgpu=$(job vgpu "image: $registry/test/busybox:1
resources: {gpus: 0.5, gpuMemory: 4Gi}
mounts: [{hostPath: /lib, mountPath: /lib}, {hostPath: /lib64, mountPath: /lib64}, {hostPath: /usr/lib, mountPath: /usr/lib}, {hostPath: $BIN, mountPath: $BIN}]
env: {LD_LIBRARY_PATH: $BIN/vgpu-standin}
command: [sh, -c, 'id -u; $BIN/tessera-vgpu-probe info && $BIN/tessera-vgpu-probe alloc $GiB --count 10']")
  wait_until 60 job_state_is "$vgpu" succeeded
  out=$("$TESSERA" logs "$vgpu")
  echo "$out" | head -1 | grep -qx 1000 || fail "the vGPU container should run as the image's user: $out"
  echo "$out" | grep -q "total=$((4 * GiB)) free=$((4 * GiB))" || fail "the container should see its 4 GiB vGPU: $out $("$TESSERA" logs --stderr "$vgpu")"
  echo "$out" | grep -q "allocated=$((4 * GiB)) chunks=4 result=2" || fail "allocation inside the container should stop at the cap: $out"
  log "a vGPU fraction in a container was held to its 4 GiB cap"
else
  log "SKIP the vGPU container: the probe and the stand-in driver are not built"
fi

# The task's command, user and mounts; the exit code; a writable layer of its own.
mkdir -p "$WORK/data" && echo "a dataset" >"$WORK/data/file"
chmod 1777 "$WORK/data"  # the image's user, 1000, writes here where a mount says so
mine=$(job mine "image: $registry/test/busybox:1
user: \"1234:1234\"
mounts: [{hostPath: $WORK/data, mountPath: /data}]
command: [sh, -c, 'cat /etc/motd /data/file; id -u; echo x > /tmp/written && cat /tmp/written; touch /data/nope 2>/dev/null || echo read-only; hostname; exit 3']")
wait_until 30 job_state_is "$mine" failed
[ "$(job_field "$mine" '.tasks[0].exitCode')" = 3 ] || fail "exit code 3 should be reported: $(job_json "$mine" | jq -c .tasks)"
wait_until 10 bash -c "'$TESSERA' logs $mine | grep -qx 'read-only'"
logs=$("$TESSERA" logs "$mine")
for line in "inside the image" "a dataset" 1234 x n1; do grep -qx "$line" <<<"$logs" || fail "job $mine should print '$line': $logs"; done
[ ! -e "$WORK/data/nope" ] || fail "a mount is read-only unless asked"
[ -z "$(ls "$WORK/n1/containers/bundles")" ] || fail "ended tasks' bundles should be removed: $(ls "$WORK/n1/containers/bundles")"
log "container jobs: image defaults, command, user, mounts, exit code, logs"

# The task's GPUs through CDI (the agent's fake spec for fake GPUs): their
# device nodes and nothing else, the driver's files, the spec's environment,
# and CUDA_VISIBLE_DEVICES naming them by UUID (inside, they count from 0).
gpus=$(job gpus "image: $registry/test/busybox:1
resources: {gpus: 2}
command: [sh, -c, 'ls /dev | grep nvidia; cat /usr/local/tessera-fake-driver/version; echo cdi=\$TESSERA_CDI_FAKE visible=\$CUDA_VISIBLE_DEVICES']")
wait_until 30 job_state_is "$gpus" succeeded
wait_until 10 bash -c "'$TESSERA' logs $gpus | grep -q '^cdi='"
logs=$("$TESSERA" logs "$gpus")
expected_nodes=$(job_json "$gpus" | jq -r '.tasks[0].gpus[] | "nvidia\(.)"' | sort | tr '\n' ' ')
actual_nodes=$(grep -x 'nvidia[0-9]*' <<<"$logs" | sort | tr '\n' ' ')
[ "$actual_nodes" = "$expected_nodes" ] || fail "the container should see exactly its GPUs' nodes ($expected_nodes): $logs"
grep -qx nvidiactl <<<"$logs" || fail "the spec-wide /dev/nvidiactl is missing: $logs"
grep -q "tessera fake GPU driver for n1" <<<"$logs" || fail "the driver mount is missing: $logs"
grep -Eq '^cdi=1 visible=GPU-[^,]+,GPU-[^,]+$' <<<"$logs" || fail "CDI env and CUDA_VISIBLE_DEVICES by UUID: $logs"
log "GPUs through CDI: $(tr '\n' ' ' <<<"$logs")"

# Root only where the queue allows it (a container's root is the node's):
# refused in queue default, run in a queue with allowRootContainers, which
# with requireImage also refuses host-process tasks at submission.
root=$(job root "image: $registry/test/busybox:1
user: \"0\"
command: [id, -u]")
wait_until 30 job_state_is "$root" failed
job_field "$root" '.tasks[0].message' | grep -q "allowRootContainers" || fail "root should be refused by default: $(job_json "$root" | jq -c .tasks)"
curl -sf -X PUT "$SERVER_URL/v1/queues/rooted" -d '{"guaranteed": 0, "allowRootContainers": true, "requireImage": true}' -o /dev/null ||
  fail "cannot create queue rooted"
sed -i 's/metadata: {name: root}/metadata: {name: root, queue: rooted}/' "$WORK/root.yaml"
root=$(submit "$WORK/root.yaml")
wait_until 30 job_state_is "$root" succeeded
wait_until 10 bash -c "'$TESSERA' logs $root | grep -qx 0"
"$TESSERA" submit --queue rooted -- true >"$WORK/refused.out" 2>&1 && fail "queue rooted should refuse a host-process task"
grep -q "queue rooted runs tasks only from images" "$WORK/refused.out" || fail "the refusal should say why: $(cat "$WORK/refused.out")"
log "root containers only where the queue allows; requireImage refuses host processes"

# The memory limit holds inside the container: past 64Mi it is OOM-killed.
oom=$(job oom "image: $registry/test/busybox:1
resources: {memory: 64Mi}
command: [sh, -c, 'head -c 300000000 /dev/zero | tail > /dev/null']")
wait_until 30 job_state_is "$oom" failed
job_field "$oom" '.tasks[0].message' | grep -q "out of memory" || fail "the container should be OOM-killed at its limit: $(job_json "$oom" | jq -c .tasks)"
log "memory limit held inside the container"

# The checkpoint signal reaches the container's own process.
signal=$(job signal "image: $registry/test/busybox:1
mounts: [{hostPath: $WORK/data, mountPath: /data, readOnly: false}]
command: [sh, -c, 'trap \"echo got USR1 > /data/signal; exit 0\" USR1; echo up > /data/up; while true; do sleep 0.1; done']" \
  "checkpoint: {signal: SIGUSR1, gracePeriod: 20s}")
wait_until 30 test -s "$WORK/data/up"
"$TESSERA" cancel "$signal" >/dev/null
wait_until 20 test -s "$WORK/data/signal"
log "the checkpoint signal reached the container's process"

# A container's first process that ignores SIGTERM (the kernel shields a pid
# namespace's init from signals it does not handle) is killed after the grace.
stubborn=$(job stubborn "image: $registry/test/busybox:1
command: [sh, -c, 'trap \"\" TERM; while true; do sleep 1; done']")
wait_until 30 job_state_is "$stubborn" running
"$TESSERA" cancel "$stubborn" >/dev/null
wait_until 20 bash -c "[ -z \"\$(runc --root $WORK/n1/containers/runc list -q)\" ]"
log "a container ignoring SIGTERM was killed after the grace"

# A wrong digest is refused, with the reason.
digest=$(job digest "image: $registry/test/busybox@sha256:$(printf '0%.0s' $(seq 64))")
wait_until 30 job_state_is "$digest" failed
job_field "$digest" '.tasks[0].message' | grep -qi "test/busybox" || fail "a wrong digest should fail naming the image: $(job_json "$digest" | jq -c .tasks)"

# The registry down: a clear error, and the job restarted per its policy.
kill -9 "$REGISTRY_PID"
down=$(job down "image: $registry/test/busybox:2" "restart: {maxRestarts: 1}")
wait_until 60 job_state_is "$down" failed
[ "$(job_field "$down" .restarts)" = 1 ] || fail "the job should be restarted once: $(job_json "$down" | jq -c '{restarts, events: [.events[].type]}')"
job_field "$down" '.tasks[0].message' | grep -q "$registry" || fail "the failure should name the registry: $(job_json "$down" | jq -c .tasks)"
log "registry down: $(job_field "$down" '.tasks[0].message')"
start_registry

# kill -9 of the agent while a container task and a host task run: both carry
# on, are adopted, and end once with their exit codes.
contained=$(job contained "image: $registry/test/busybox:1
mounts: [{hostPath: $WORK/data, mountPath: /data, readOnly: false}]
command: [sh, -c, 'echo started >> /data/contained; while [ ! -e /data/go ]; do sleep 0.1; done; exit 5']")
host=$(job host "command: [sh, -c, 'echo started >> $WORK/data/host; while [ ! -e $WORK/data/go ]; do sleep 0.1; done; exit 6', e2e-$$]")
for id in "$contained" "$host"; do wait_until 30 job_state_is "$id" running; done
wait_until 10 test -s "$WORK/data/contained"
# tessera exec runs inside the container: its root, its user.
[ "$("$TESSERA" exec "$contained" -- sh -c 'cat /etc/motd; id -u')" = "inside the image
1000" ] || fail "exec should run inside the container: $("$TESSERA" exec "$contained" -- sh -c 'cat /etc/motd; id -u' 2>&1)"
kill -9 "${AGENT_PID[n1]}"
AGENT_CGROUPS=1 start_agent n1 4 --insecure-registry "$registry" --insecure-registry "$private"
wait_until 20 bash -c "grep -q 'adopted 2 running tasks' '$WORK/n1.log'"
touch "$WORK/data/go"
wait_until 30 job_state_is "$contained" failed
wait_until 30 job_state_is "$host" failed
[ "$(job_field "$contained" '.tasks[0].exitCode')" = 5 ] && [ "$(job_field "$host" '.tasks[0].exitCode')" = 6 ] ||
  fail "both exit codes should be reported: $(job_json "$contained" | jq -c .tasks) $(job_json "$host" | jq -c .tasks)"
for id in "$contained" "$host"; do [ "$(job_field "$id" .restarts)" = 0 ] || fail "job $id should not restart"; done
[ "$(wc -l <"$WORK/data/contained")" = 1 ] && [ "$(wc -l <"$WORK/data/host")" = 1 ] || fail "each task should start once"
log "agent kill -9: the container and the host task were adopted and ended once"
