#!/usr/bin/env bash
# Chaos on loopback, with real processes: 3 etcd members, 3 `tessera server`
# replicas and 4 agents, a steady stream of submissions through the CLI, and
# while it runs: kill -9 of the leader (twice), of an etcd member, of an
# agent, and Xid faults injected into GPUs. A supervisor loop starts a dead
# replica again, as systemd would.
#
# At the end: every accepted job is accounted for (and finished), no GPU was
# ever held by two tasks at once (each task holds a lock file per GPU), no
# task (job, attempt, rank) started twice, no job used a restart (none
# failed; faults and lost nodes requeue without one), and each job hit by a
# GPU fault was requeued. Prints the failover figures.
#   failover.sh TESSERA
source "$(dirname "$0")/../e2e/lib.sh" "$1"
now_ms() { date +%s%3N; }
lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }

start_etcd 3
read -r -a ports < <(free_ports 3)
urls=()
for i in 0 1 2; do urls+=("http://127.0.0.1:${ports[i]}"); done
export TESSERA_SERVER
TESSERA_SERVER=$(IFS=,; echo "${urls[*]}")

start_replica() {
  "$TESSERA" server --listen "127.0.0.1:${ports[$1]}" --data-dir "$WORK/server-$1" --store "$ETCD_URL" --lease-ttl 1 \
    --heartbeat-timeout 5 --plain-http >>"$WORK/server-$1.log" 2>&1 &
  echo $! >"$WORK/server-$1.pid"
  PIDS+=("$!")
  disown "$!"
}
for i in 0 1 2; do start_replica "$i"; done
# The supervisor: a replica that died (killed, or exited on losing its lease) starts again.
(
  while sleep 0.3; do
    for i in 0 1 2; do
      if ! kill -0 "$(cat "$WORK/server-$i.pid")" 2>/dev/null; then
        echo "$(now_ms) replica $i" >>"$WORK/supervisor-restarts"
        start_replica "$i"
      fi
    done
  done
) &
supervisor=$!
CLEANUPS+=("kill $supervisor; for i in 0 1 2; do kill -9 \$(cat $WORK/server-\$i.pid); done")

leader_url() { curl -sf "${urls[0]}/v1/leader" || curl -sf "${urls[1]}/v1/leader" || curl -sf "${urls[2]}/v1/leader"; }
leader_pid() {
  local leader i
  leader=$(leader_url | jq -r '.leader // empty')
  for i in 0 1 2; do
    if [ "$leader" = "${urls[i]}" ]; then cat "$WORK/server-$i.pid"; fi
  done
}
wait_until 30 bash -c "curl -s ${urls[0]}/v1/leader | jq -e '.leader != null' >/dev/null"

SERVER_URL=$TESSERA_SERVER  # agents get every replica
for n in n1 n2 n3 n4; do start_agent "$n" 4 --gpu-recheck 3; done
wait_until 30 nodes_ready 4

# A task: locks each of its GPUs (a second holder means a double allocation),
# records its start, works, exits 0.
locks="$WORK/locks"
mkdir -p "$locks"
cat >"$WORK/task.sh" <<TASK
#!/usr/bin/env bash
for g in \${CUDA_VISIBLE_DEVICES//,/ }; do
  exec {fd}>"$locks/\$TESSERA_NODE_NAME.gpu\$g"
  flock -n "\$fd" || echo "\$TESSERA_JOB_ID \$TESSERA_ATTEMPT \$RANK \$TESSERA_NODE_NAME gpu\$g" >>"$WORK/double-allocations"
done
echo "\$TESSERA_JOB_ID \$TESSERA_ATTEMPT \$RANK" >>"$WORK/starts"
sleep "\$1"
TASK
chmod +x "$WORK/task.sh"

# Two long jobs to inject GPU faults into, on nodes the agent kill spares.
"$TESSERA" nodes cordon n4 >/dev/null
target_a=$(submit --name fault-a --gpus 2 -- "$WORK/task.sh" 40)
target_b=$(submit --name fault-b --gpus 2 -- "$WORK/task.sh" 40)
wait_until 30 job_state_is "$target_a" running
wait_until 30 job_state_is "$target_b" running
"$TESSERA" nodes uncordon n4 >/dev/null

# The stream: a job every 0.25 s for 30 s, singles and 2x2-GPU gangs of 1-4 s.
(
  k=0
  end=$((SECONDS + 30))
  while [ $SECONDS -lt $end ]; do
    k=$((k + 1))
    if [ $((k % 3)) = 0 ]; then args=(--gpus 2 --tasks 2); else args=(--gpus 1); fi
    if out=$("$TESSERA" submit -o json --name "s$k" "${args[@]}" -- "$WORK/task.sh" $((1 + k % 4)) 2>>"$WORK/submit-errors"); then
      echo "$out" | jq -r '.jobs[0].id' >>"$WORK/accepted"
      echo "$(now_ms)" >>"$WORK/accepted-at"
    else
      echo "$(now_ms)" >>"$WORK/refused"
    fi
    sleep 0.25
  done
) &
stream=$!

inject_fault() {  # inject_fault JOB: Xid 48 on the first GPU of its first task
  local node gpu
  node=$(job_field "$1" '.tasks[0].node')
  gpu=$(job_field "$1" '.tasks[0].gpus[0]')
  echo "{\"gpu\": $gpu, \"kind\": \"xid\", \"code\": 48}" >>"$WORK/$node.gpus.yaml.faults"
  log "Xid 48 on $node GPU $gpu, under job $1 (attempt $(job_field "$1" .attempt))"
}
kill_leader() {
  local pid
  pid=$(leader_pid)
  [ -n "$pid" ] || fail "no leader to kill"
  KILLED_AT=$(now_ms)
  kill -9 "$pid"
  log "kill -9 of the leader (pid $pid)"
}
sleep 4
inject_fault "$target_a"
sleep 2
kill_leader
first_kill=$KILLED_AT
sleep 4
kill_etcd_member 0
log "kill -9 of etcd member 0"
sleep 2
log "kill -9 of agent n4 (its tasks are left running, as on a node whose agent crashed)"
kill -9 "${AGENT_PID[n4]}"
sleep 3
kill_leader
second_kill=$KILLED_AT
sleep 2
restart_etcd_member 0
inject_fault "$target_b"
sleep 3
start_agent n4 4 --gpu-recheck 3
log "agent n4 restarted"
wait "$stream"
log "the stream ended: $(lines "$WORK/accepted") accepted, $(lines "$WORK/refused") refused"

# Everything accepted finishes.
all_done() {
  "$TESSERA" jobs -a -o json >"$WORK/final.json" 2>/dev/null || return 1
  jq -e '[.jobs[] | select(.state != "succeeded")] | length == 0' "$WORK/final.json" >/dev/null
}
wait_until 120 all_done

after_kill() {  # after_kill TIME EVENT: ms from the kill at TIME to the first EVENT after it
  jq --argjson t "$1" --arg type "$2" '[.events[] | select(.type == $type and .time > $t) | .time] | min - $t' "$WORK/events.json"
}
curl -sfL "$(leader_url | jq -r .leader)/v1/events?since=0" >"$WORK/events.json"
accepted=$(lines "$WORK/accepted")
missing=$(jq -r '.jobs[].id' "$WORK/final.json" | sort | comm -13 - <(sort "$WORK/accepted") | wc -l)
twice=$(sort "$WORK/starts" | uniq -d | wc -l)
doubles=$(lines "$WORK/double-allocations")
restarts=$(jq '[.jobs[].restarts] | add' "$WORK/final.json")
cat <<FIGURES
chaos figures:
  kill -9 of the leader -> a new leader has recovered the state: $(after_kill "$first_kill" ServerRecovered) ms, $(after_kill "$second_kill" ServerRecovered) ms
  kill -9 of the leader -> the new leader places a job: $(after_kill "$first_kill" JobScheduled) ms, $(after_kill "$second_kill" JobScheduled) ms
  submissions accepted during the chaos: $accepted (refused: $(lines "$WORK/refused")$(if [ -s "$WORK/submit-errors" ]; then printf '; %s' "$(sort "$WORK/submit-errors" | uniq -c | head -3 | tr -s ' ')"; fi))
  jobs lost: $missing
  tasks (job, attempt, rank) started twice: $twice
  GPUs held by two tasks at once: $doubles
  restarts used: $restarts; fault targets' attempts: $(job_field "$target_a" .attempt), $(job_field "$target_b" .attempt)
  replica restarts by the supervisor: $(lines "$WORK/supervisor-restarts")
FIGURES
[ "$missing" = 0 ] || fail "$missing accepted jobs are missing"
[ "$twice" = 0 ] || fail "tasks started twice: $(sort "$WORK/starts" | uniq -d)"
[ "$doubles" = 0 ] || fail "GPUs double-allocated: $(cat "$WORK/double-allocations")"
[ "$restarts" = 0 ] || fail "a job used a restart: $(jq -c '[.jobs[] | select(.restarts > 0) | {id, restarts}]' "$WORK/final.json")"
[ "$(job_field "$target_a" .attempt)" -ge 2 ] || fail "the job under the first fault was requeued"
[ "$(job_field "$target_b" .attempt)" -ge 2 ] || fail "the job under the second fault was requeued"
# Availability, not speed (the stream's pace depends on the machine): the CLI
# waits out elections and never resends a request that reached a server, so
# each replica death may cost at most the one submission in flight to it;
# submissions are accepted again after the last kill; and the stream never
# stalled for most of its 30 s.
deaths=$(lines "$WORK/supervisor-restarts")
[ "$(lines "$WORK/refused")" -le "$deaths" ] || fail "$(lines "$WORK/refused") submissions refused, more than the $deaths replica deaths"
[ "$(awk -v t="$second_kill" '$1 > t' "$WORK/accepted-at" | wc -l)" -ge 1 ] || fail "no submission was accepted after the second leader kill"
[ "$accepted" -ge 10 ] || fail "too few submissions were accepted during the chaos: $accepted"
