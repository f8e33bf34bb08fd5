#!/usr/bin/env bash
# Interactive sessions end to end (docs/interactive.md), on a `tessera up`
# cluster with TLS and access control, so every session travels through the
# API's TLS connection: exec with and without a terminal (exit codes, stdout
# and stderr apart, stdin), port-forward to a web server a job runs (the
# notebook case), attach to a batch job's output, `run -it` on a GPU share
# (the shell on a terminal, its exit code, its log, a re-attach after the
# user's connection dropped, the idle timeout), and every one refused for
# another user's job.
source "$(dirname "$0")/lib.sh" "$1"
PTY=("python3" "$E2E_DIR/pty_session.py")

start_up 1 2
"$TESSERA" queues set team-a --guaranteed 2 --members alice >/dev/null
"$TESSERA" queues set team-b --guaranteed 1 --members bob >/dev/null
declare -A TOKEN
for who in alice bob; do TOKEN[$who]=$("$TESSERA" tokens create --user "$who" --role user 2>/dev/null); done
as() { local who=$1; shift; TESSERA_TOKEN=${TOKEN[$who]} "$TESSERA" "$@"; }
read -r web local_port < <(free_ports 2)

# A job serving HTTP on its node, as a notebook server would.
job=$(TESSERA_TOKEN=${TOKEN[alice]} submit --queue team-a --gpus 1 -- python3 -m http.server "$web" --bind 127.0.0.1)
wait_until 30 job_state_is "$job" running

# exec without a terminal: stdout and stderr apart, the command's exit code, stdin.
code=0
as alice exec "$job" -- sh -c 'echo "gpus=$CUDA_VISIBLE_DEVICES"; echo to-stderr >&2; exit 7' >"$WORK/exec.out" 2>"$WORK/exec.err" || code=$?
[ "$code" = 7 ] || fail "exec exits with the command's code 7, not $code: $(cat "$WORK/exec.out" "$WORK/exec.err")"
grep -qx 'gpus=[01]' "$WORK/exec.out" || fail "exec runs in the task's environment: $(cat "$WORK/exec.out")"
grep -qx to-stderr "$WORK/exec.err" && ! grep -q to-stderr "$WORK/exec.out" || fail "stderr stays stderr"
[ "$(printf 'line one\nline two\n' | as alice exec "$job" -- wc -l)" = 2 ] || fail "exec reads stdin to its end"
code=0
out=$(as alice exec "$job" -- no-such-command 2>&1) || code=$?
[ "$code" = 1 ] && [[ "$out" == *"command not found: no-such-command"* ]] || fail "a command that is not there ($code): $out"
log "exec: exit code, stdout and stderr apart, stdin, and a missing command named"

# exec with a terminal: the user's own is one, so the command gets one too.
out=$("${PTY[@]}" 30 'expect:tty-ok' -- "$TESSERA" exec "$job" -- sh -c 'test -t 0 && test -t 1 && echo tty-ok; stty size') ||
  fail "exec on a terminal: $out"
[[ "$out" == *tty-ok* ]] || fail "exec gives the command a terminal: $out"
log "exec: a terminal when the caller has one"

# port-forward: the job's web server, reached from here through the API.
# The binary itself in the background (not the `as` function's subshell), so
# that $! is its pid and cleanup's kill reaches it.
TESSERA_TOKEN=${TOKEN[alice]} "$TESSERA" port-forward "$job" "$local_port:$web" >"$WORK/forward.log" 2>&1 &
PIDS+=("$!")
disown "$!"
wait_until 20 grep -q Forwarding "$WORK/forward.log"
fetch() { python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$1"; }
for _ in 1 2 3; do
  page=$(fetch "http://127.0.0.1:$local_port/") || fail "port-forward reaches the job's server"
  [[ "$page" == *'Directory listing'* ]] || fail "port-forward brings the job's page: $page"
done
log "port-forward: three requests to the job's web server through the API's TLS connection"

# Another user is refused every kind of session, with the API's words.
expect_refused() {
  local text=$1 out code=0
  shift
  out=$("$@" 2>&1 </dev/null) || code=$?
  [ "$code" = 5 ] && [[ "$out" == *"$text"* ]] || fail "'$*' is refused with exit code 5 and '$text' ($code): $out"
}
expect_refused "may not open a session in job $job" as bob exec "$job" -- cat /etc/hostname
expect_refused "may not open a session in job $job" as bob attach "$job"
expect_refused "bob may not read the logs of job $job" as bob port-forward "$job" 8888:8888
status=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TESSERA_CA_FILE" -X POST -H "Authorization: Bearer ${TOKEN[alice]}" \
  -H 'Connection: Upgrade' -H 'Upgrade: tessera-session/1' -d '{"kind":"exec"}' "$TESSERA_SERVER/v1/jobs/$job/sessions")
[ "$status" = 400 ] || fail "an exec without a command: 400, not $status"
log "bob is refused exec, attach and port-forward in alice's job"

# attach to a batch job: its output as it is written, until it ends.
ticker=$(TESSERA_TOKEN=${TOKEN[alice]} submit --queue team-a -- sh -c 'sleep 1; for i in 1 2 3 4 5 6; do echo tick-$i; sleep 0.5; done')
wait_until 30 job_state_is "$ticker" running
as alice attach "$ticker" >"$WORK/attach.out" </dev/null || fail "attach ends as its job does: $(cat "$WORK/attach.out")"
grep -q tick-6 "$WORK/attach.out" || fail "attach followed the output to the end: $(cat "$WORK/attach.out")"
log "attach: a batch job's output followed to its end"

# run -it: a shell on a GPU share, typed into, left with its exit code.
out=$("${PTY[@]}" 60 'expect:$ ' 'send:echo $((6*7)) on $CUDA_VISIBLE_DEVICES\n' 'expect:42 on' 'send:exit 3\n' -- \
  env TESSERA_TOKEN="${TOKEN[alice]}" "$TESSERA" run -it --queue team-a --gpus 0.25 -e 'PS1=$ ' -- sh) && code=0 || code=$?
[ "$code" = 3 ] || fail "run -it exits with the shell's code 3, not $code: $out"
session=$(as alice jobs --all -o json | jq -r '[.jobs[] | select(.name == "session")][0].id')
[ "$(job_field "$session" .state)" = failed ] || fail "the session's job ended with its shell: $(job_json "$session")"
wait_until 10 sh -c "'$TESSERA' logs '$session' | grep -q '42 on'"
log "run -it: a shell on a GPU share, its exit code, and its log"

# The user's connection drops: the session waits for them to come back.
out=$("${PTY[@]}" 60 'expect:$ ' 'send:cd /tmp; echo ready\n' 'expect:ready' 'hangup' -- \
  env TESSERA_TOKEN="${TOKEN[alice]}" "$TESSERA" run -it --queue team-a --gpus 0.25 -e 'PS1=$ ' -- sh) || true
session=$(as alice jobs -o json | jq -r '[.jobs[] | select(.name == "session")][0].id')
job_state_is "$session" running || fail "a session whose user dropped keeps running: $(job_json "$session")"
out=$("${PTY[@]}" 60 'expect:ready' 'send:echo "at $(pwd)"\n' 'expect:at /tmp' 'send:exit 0\n' -- \
  env TESSERA_TOKEN="${TOKEN[alice]}" "$TESSERA" attach "$session") || fail "attach returns to the session: $out"
wait_until 20 job_state_is "$session" succeeded
log "run -it: the session survived a dropped connection and was attached again"

# Nobody uses a session for its idle timeout: it is hung up and its GPU share freed.
out=$("${PTY[@]}" 60 'expect:$ ' 'hangup' -- \
  env TESSERA_TOKEN="${TOKEN[alice]}" "$TESSERA" run -it --queue team-a --gpus 0.25 -e 'PS1=$ ' --idle-timeout 2s -- sh) || true
session=$(as alice jobs -o json | jq -r '[.jobs[] | select(.name == "session")][0].id')
wait_until 30 sh -c "'$TESSERA' describe -o json '$session' | jq -e '.state == \"failed\"' >/dev/null"
ended=$(job_json "$session")
[[ "$ended" == *'idle timeout'* ]] || fail "the job says why it ended: $ended"
log "run -it: an unused session was hung up after its idle timeout"
echo "PASS"
