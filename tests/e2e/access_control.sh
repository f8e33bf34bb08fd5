#!/usr/bin/env bash
# Access control end to end (docs/security.md): a server with --auth, two
# teams' queues, tokens for their users, a queue-admin, a viewer and a node
# that joins with a join token. Each refusal the issue names is checked with
# its status: no token and bad tokens (401), another user's job or another
# queue's logs (403), an agent acting for another node (403), a revoked or
# expired token (401), a rate and a queue limit (429), a per-user GPU limit
# in a queue (the job waits); and the audit log
# shows who was refused.
source "$(dirname "$0")/lib.sh" "$1"

start_server --auth --admin-token-file "$WORK/admin.token" --rate-limit 20 --max-pending-per-user 2
export TESSERA_TOKEN_FILE=$WORK/admin.token
[ "$(stat -c %a "$WORK/admin.token")" = 600 ] || fail "the admin token file is readable by its user only"
status_of() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(status_of "$SERVER_URL/v1/jobs")" = 401 ] || fail "no token: 401"
[ "$(status_of "$SERVER_URL/v1/healthz")" = 200 ] || fail "/v1/healthz is public"
[ "$(status_of -H 'Authorization: Bearer tsr_0123456789abcdef_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef' "$SERVER_URL/v1/jobs")" = 401 ] ||
  fail "a forged token: 401"

"$TESSERA" queues set team-a --guaranteed 2 --members alice --admins anna >/dev/null
"$TESSERA" queues set team-b --guaranteed 2 --members bob >/dev/null
declare -A TOKEN
for who in alice:user bob:user anna:user carol:viewer dave:user; do
  TOKEN[${who%%:*}]=$("$TESSERA" tokens create --user "${who%%:*}" --role "${who##*:}" 2>/dev/null)
done
"$TESSERA" tokens create --user ops --role node-join 2>/dev/null >"$WORK/join.token"
as() { local who=$1; shift; TESSERA_TOKEN=${TOKEN[$who]} "$TESSERA" "$@"; }
# expect_refused CODE TEXT COMMAND...: the command fails with exit code 5 and says TEXT.
expect_refused() {
  local text=$1 out code=0
  shift
  out=$("$@" 2>&1) || code=$?
  [ "$code" = 5 ] || fail "'$*' exits 5 (refused), not $code: $out"
  [[ "$out" == *"$text"* ]] || fail "'$*' says '$text': $out"
}

start_agent n1 4 --join-token-file "$WORK/join.token"
wait_until 20 nodes_ready 1
[ "$(stat -c %a "$WORK/n1/credential")" = 600 ] || fail "the node keeps its own credential, readable by its user only"
credential=$(cat "$WORK/n1/credential")
[ "$(status_of -X POST -H "Authorization: Bearer $credential" -d '{}' "$SERVER_URL/v1/nodes/n2/status")" = 403 ] ||
  fail "a node's credential cannot report for another node"
[ "$(status_of -H "Authorization: Bearer $credential" "$SERVER_URL/v1/jobs")" = 403 ] || fail "a node's credential reads no jobs"
log "node n1 joined and holds its own credential"

a_job=$(TESSERA_TOKEN=${TOKEN[alice]} submit --queue team-a --gpus 1 -- sh -c 'echo alice-secret; sleep 60')
b_job=$(TESSERA_TOKEN=${TOKEN[bob]} submit --queue team-b --gpus 1 -- sh -c 'echo bob-secret; sleep 60')
wait_until 20 job_state_is "$a_job" running
expect_refused "not a member of queue team-b" as alice submit --queue team-b --gpus 1 -- true
expect_refused "may not cancel job $a_job" as bob cancel "$a_job"
expect_refused "may not read the logs of job $a_job" as bob logs "$a_job"
[ "$(as bob jobs -o json | jq -c '[.jobs[].id]')" = "[$b_job]" ] || fail "bob sees only his job: $(as bob jobs -o json)"
expect_refused "is not bob's" as bob describe "$a_job"
log "alice and bob: each sees and cancels only their own"

# anna administers team-a: alice's job is hers to see, read and cancel; bob's is not.
as anna logs "$a_job" | grep -q alice-secret || fail "a queue-admin reads the logs of her queue's jobs"
expect_refused "may not cancel job $b_job" as anna cancel "$b_job"
expect_refused "not an admin of queue team-b" as anna queues set team-b --guaranteed 1
as anna queues set team-a/interns --members erin >/dev/null || fail "a queue-admin creates queues below hers"
# carol views: everything, but no logs and no changes.
[ "$(as carol jobs -o json | jq '.jobs | length')" = 2 ] || fail "a viewer sees every job"
expect_refused "may not POST /v1/jobs" as carol submit --gpus 1 -- true
expect_refused "may not read the logs" as carol logs "$b_job"
expect_refused "may not POST /v1/nodes/n1/cordon" as alice nodes cordon n1
expect_refused "needs admin access" as alice audit
log "queue-admin, viewer and user limits hold"

# Per-user limits: one user may hold 1 GPU in team-a. alice holds it, so her
# next job waits while GPUs are free; bob's share of team-b is untouched.
"$TESSERA" queues set team-a --guaranteed 2 --user-limit 1 --members alice --admins anna >/dev/null
second=$(TESSERA_TOKEN=${TOKEN[alice]} submit --queue team-a --gpus 1 -- true)
waits_on_user_limit() { [[ "$(job_field "$1" .message)" == *"user alice holds 1 of the 1 GPUs queue 'team-a' allows one user"* ]]; }
wait_until 10 waits_on_user_limit "$second"
[ "$("$TESSERA" queues -o json | jq '.queues[] | select(.name == "team-a") | .userLimit')" = 1 ] || fail "the queue shows its user limit"
"$TESSERA" cancel "$second" >/dev/null
log "per-user limit: alice's second GPU in team-a waits"

# Revoked and expired tokens.
bob_id=$(as bob tokens -o json | jq -r '.tokens[0].id')
"$TESSERA" tokens revoke "$bob_id" >/dev/null
expect_refused "was revoked" as bob jobs
TOKEN[eve]=$("$TESSERA" tokens create --user eve --role viewer --expires 1s 2>/dev/null)
sleep 1.5
expect_refused "has expired" as eve jobs
log "revoked and expired tokens: 401"

# Limits: dave's burst is 40 requests, then 20 per second; at most 2 jobs waiting per user.
# One curl, one keep-alive connection: 100 requests in far less than the 3 s
# the bucket would need to refill, however loaded the machine.
urls=()
for _ in $(seq 100); do urls+=(-o /dev/null "$SERVER_URL/v1/cluster"); done
codes=$(curl -s -w '%{http_code}\n' -H "Authorization: Bearer ${TOKEN[dave]}" "${urls[@]}" | sort | uniq -c)
grep -q " 429$" <<<"$codes" && grep -q " 200$" <<<"$codes" || fail "a burst past the token's rate answers 429: $codes"
"$TESSERA" queues set team-a --guaranteed 2 --members alice,dave --admins anna >/dev/null
sleep 2  # the bucket refills
as dave submit --queue team-a --gpus 4 -- true >/dev/null
as dave submit --queue team-a --gpus 4 -- true >/dev/null
expect_refused "at most 2 may wait per user" as dave submit --queue team-a --gpus 4 -- true
log "rate limit and queue limit: 429"

audit=$("$TESSERA" audit -o json --limit 1000)
jq -e '[.records[] | select(.user == "bob" and .status == 403 and (.target | test("/v1/jobs/'"$a_job"'")))] | length == 1' <<<"$audit" >/dev/null ||
  fail "the audit log shows bob's refused cancel: $(jq -c '.records[-5:]' <<<"$audit")"
jq -e '[.records[] | select(.user == "alice" and .method == "POST" and .target == "/v1/jobs" and .status == 201)] | length == 2' <<<"$audit" >/dev/null ||
  fail "the audit log shows alice's two submissions"

# Tokens and the audit log survive a restart of the server.
kill -9 "$SERVER_PID"
sleep 0.5
start_server --auth --admin-token-file "$WORK/admin.token"
[ "$(as alice jobs -o json | jq '[.jobs[].id] | index('"$a_job"') != null')" = true ] || fail "alice's token works after a restart"
expect_refused "was revoked" as bob jobs
"$TESSERA" audit -o json | jq -e '[.records[] | select(.user == "bob" and .status == 403)] | length >= 1' >/dev/null ||
  fail "the audit log survives a restart"
log "tokens, revocations and the audit log survive a restart"
