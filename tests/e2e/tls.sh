#!/usr/bin/env bash
# TLS and mutual TLS end to end (docs/security.md): a server that is its own
# CA, agents that prove their node with certificates from it, and each
# refusal the issue names: a plain-HTTP client, a client that does not trust
# the CA, an agent without a certificate, with another node's, with a forged
# one (another CA: refused at the handshake), and, with
# --require-client-cert, any client without one. Plain HTTP is refused off
# loopback.
source "$(dirname "$0")/lib.sh" "$1"

code=0
out=$("$TESSERA" server --listen 0.0.0.0:0 --plain-http --no-auth --data-dir "$WORK/plain" 2>&1) || code=$?
[ "$code" = 2 ] && [[ "$out" == *"--plain-http serves loopback addresses only"* ]] || fail "plain HTTP off loopback is refused ($code): $out"

SERVER_TLS=1 start_server --auth --admin-token-file "$WORK/admin.token"
export TESSERA_TOKEN_FILE=$WORK/admin.token
[[ "$SERVER_URL" == https://* ]] || fail "the server speaks TLS: $SERVER_URL"
[ "$(stat -c %a "$WORK/server/tls/ca.key")" = 600 ] || fail "the CA key is readable by its owner only"
ca=$TESSERA_CA_FILE

# Clients: plain HTTP is told to use https; no trust in the CA fails the handshake.
curl -s "http://${SERVER_URL#https://}/v1/healthz" | grep -q 'this server speaks TLS: use https://' ||
  fail "plain HTTP to the TLS port: $(curl -s "http://${SERVER_URL#https://}/v1/healthz")"
code=0
out=$(env -u TESSERA_CA_FILE "$TESSERA" nodes 2>&1) || code=$?
[ "$code" = 3 ] && [[ "$out" == *"certificate verify failed"*"--ca-file"* ]] || fail "a client that does not trust the CA ($code): $out"
"$TESSERA" nodes >/dev/null || fail "a client that trusts the CA is served"
log "clients: TLS served, plain HTTP and untrusted CA refused"

"$TESSERA" tokens create --user ops --role node-join 2>/dev/null >"$WORK/join.token"
for node in n1 n2; do "$TESSERA" certs issue --ca-dir "$WORK/server/tls" --name "$node" --out "$WORK/$node" >/dev/null; done
[ "$(stat -c %a "$WORK/n1.key")" = 600 ] || fail "a node's key is readable by its owner only"
# Another CA's certificate for n3: a forgery to this server.
"$TESSERA" certs issue --ca-dir "$WORK/evil" --name n3 --out "$WORK/n3-forged" >/dev/null

start_agent n1 2 --join-token-file "$WORK/join.token" --ca-file "$ca" --cert-file "$WORK/n1.crt" --key-file "$WORK/n1.key"
start_agent n2 2 --join-token-file "$WORK/join.token" --ca-file "$ca" --cert-file "$WORK/n1.crt" --key-file "$WORK/n1.key"
start_agent n3 2 --join-token-file "$WORK/join.token" --ca-file "$ca" --cert-file "$WORK/n3-forged.crt" --key-file "$WORK/n3-forged.key"
start_agent n4 2 --join-token-file "$WORK/join.token" --ca-file "$ca"
wait_until 20 nodes_ready 1
wait_until 20 grep -q "names node n1, which cannot act for node n2" "$WORK/n2.log"
wait_until 20 grep -q "TLS handshake failed" "$WORK/n3.log"
wait_until 20 grep -q "node n4 must present its client certificate" "$WORK/n4.log"
[ "$("$TESSERA" nodes -o json | jq -r '[.nodes[].name] | join(" ")')" = n1 ] || fail "only n1 joined: $("$TESSERA" nodes -o json)"
log "agents: n1 joined with its certificate; n2 (n1's certificate), n3 (forged) and n4 (none) refused"

# The credential n1 earned is not enough without n1's certificate.
credential=$(cat "$WORK/n1/credential")
status=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$ca" -X POST -H "Authorization: Bearer $credential" -d '{}' "$SERVER_URL/v1/nodes/n1/status")
[ "$status" = 403 ] || fail "n1's credential without its certificate: $status"

id=$(submit --gpus 1 -- sh -c 'echo over-tls')
wait_until 30 job_state_is "$id" succeeded
"$TESSERA" logs "$id" | grep -q over-tls || fail "the job's log came back over TLS"
log "a job ran on n1 and its log came back over TLS"

# --require-client-cert: the handshake itself refuses a client without one.
kill -9 "$SERVER_PID"
"$TESSERA" server --listen "127.0.0.1:$SERVER_PORT" --data-dir "$WORK/server" --auth --require-client-cert >>"$WORK/server.log" 2>&1 &
PIDS+=("$!")
disown "$!"
wait_until 20 curl -sf --cacert "$ca" --cert "$WORK/n1.crt" --key "$WORK/n1.key" "$SERVER_URL/v1/healthz" -o /dev/null
code=0
curl -s --cacert "$ca" "$SERVER_URL/v1/healthz" -o /dev/null || code=$?
[ "$code" != 0 ] || fail "a client without a certificate is refused at the handshake"
code=0
curl -s --cacert "$ca" --cert "$WORK/n3-forged.crt" --key "$WORK/n3-forged.key" "$SERVER_URL/v1/healthz" -o /dev/null || code=$?
[ "$code" != 0 ] || fail "a forged certificate is refused at the handshake"
code=0
out=$("$TESSERA" nodes 2>&1) || code=$?
[ "$code" = 3 ] && [[ "$out" == *"TLS handshake failed"* ]] || fail "the CLI without a certificate ($code): $out"
TESSERA_CERT_FILE=$WORK/n1.crt TESSERA_KEY_FILE=$WORK/n1.key "$TESSERA" nodes >/dev/null || fail "the CLI with a certificate is served"
log "--require-client-cert: refused without a certificate and with a forged one, served with one"
echo "PASS"
