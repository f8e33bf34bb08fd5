#!/usr/bin/env bash
# kill -9 of the server while a job runs and another waits: after a restart on
# the same state, both are still there, the running task was never started a
# second time, and the waiting job runs once the first one ends. Then (SQLite)
# a damaged record: the start refuses by name, --check-store lists it, and
# --quarantine-damaged sets it aside.
#   server_crash_recovery.sh TESSERA [sqlite|etcd]
# With etcd the server's data directory is deleted before the restart, as if
# its machine were lost: etcd alone holds the state.
source "$(dirname "$0")/lib.sh" "$1"
store=${2:-sqlite}
store_flags=()
if [ "$store" = etcd ]; then
  start_etcd
  store_flags=(--store "$ETCD_URL")
fi

start_server "${store_flags[@]}"
start_agent n1 2
start_agent n2 2
wait_until 20 nodes_ready 2

starts="$WORK/starts"
first=$(submit --name long --gpus 2 --tasks 2 -- sh -c "echo \$RANK:\$\$ >> $starts; sleep 6")
wait_until 20 job_state_is "$first" running
second=$(submit --name after --gpus 2 -- sh -c "echo after >> $starts")
sleep 0.5
job_state_is "$second" pending || fail "the second job must wait for GPUs"

log "kill -9 the server (pid $SERVER_PID) while job $first runs"
kill -9 "$SERVER_PID"
sleep 1
[ "$store" = etcd ] && rm -rf "$WORK/server"
start_server "${store_flags[@]}"  # same port; same data dir, or (etcd) an empty one
log "server restarted ($store)"
# Its run survives: starting (until the agents report again), running or done; never pending.
case "$(job_field "$first" .state)" in starting | running | succeeded) ;; *) fail "job $first lost its run: $(job_json "$first")" ;; esac
[ "$(job_field "$second" .state)" != "" ] || fail "job $second was lost"
wait_until 30 job_state_is "$first" succeeded
wait_until 30 job_state_is "$second" succeeded
[ "$(grep -c '^0:' "$starts")" -eq 1 ] || fail "rank 0 started more than once: $(cat "$starts")"
[ "$(grep -c '^1:' "$starts")" -eq 1 ] || fail "rank 1 started more than once: $(cat "$starts")"
[ "$(job_field "$first" .attempt)" -eq 1 ] || fail "the first job should have kept its run"
log "both jobs survived the crash; each rank started exactly once"

[ "$store" = sqlite ] || exit 0
# A damaged record: the server refuses to start and names it; --check-store
# lists it (exit 1); --quarantine-damaged sets it aside and starts with the rest.
kill -9 "$SERVER_PID"
sleep 0.5
python3 - "$WORK/server/state.db" "$first" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE objects SET key = 'abc' WHERE collection = 'jobs' AND key = ?", ("%020d" % int(sys.argv[2]),))
db.commit()
PY
if "$TESSERA" server --listen 127.0.0.1:0 --data-dir "$WORK/server" --plain-http >"$WORK/refused.log" 2>&1; then
  fail "the server started on a damaged store"
fi
grep -q "holds a damaged record: jobs/abc: key: not a job id" "$WORK/refused.log" || fail "the refusal must name the record: $(cat "$WORK/refused.log")"
status=0
"$TESSERA" server --check-store --data-dir "$WORK/server" >"$WORK/check.log" 2>&1 || status=$?
[ "$status" -eq 1 ] || fail "--check-store must exit 1 on a damaged store, not $status"
grep -q "^jobs/abc: key: not a job id" "$WORK/check.log" || fail "--check-store must list the record: $(cat "$WORK/check.log")"
grep -q "1 damaged" "$WORK/check.log" || fail "--check-store counts: $(cat "$WORK/check.log")"
start_server --quarantine-damaged
job_state_is "$second" succeeded || fail "job $second must survive beside the damaged record"
"$TESSERA" describe "$first" >/dev/null 2>&1 && fail "job $first was set aside and must be gone"
"$TESSERA" server --check-store --data-dir "$WORK/server" >"$WORK/check.log" 2>&1 || fail "set aside, the record is no longer damage: $(cat "$WORK/check.log")"
log "a damaged record stopped the start by name, was listed by --check-store and set aside by --quarantine-damaged"
