#!/usr/bin/env bash
# Agents as separate hosts: each in a network namespace of its own, with its
# own address on a bridge. A 2-rank gang meets across the namespaces at
# MASTER_ADDR, the address of rank 0's host; the agents speak mutual TLS to
# the server across the bridge. Needs root and iproute2.
source "$(dirname "$0")/lib.sh" "$1"

if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
  echo "skipped: needs root and iproute2 to create network namespaces"
  exit 77
fi
tag=$((RANDOM % 200 + 20))
bridge="tbr$tag"
ip link add "$bridge" type bridge || { echo "skipped: cannot create a bridge here"; exit 77; }
CLEANUPS+=("ip link del $bridge")
ip addr add "10.$tag.0.1/24" dev "$bridge"
ip link set "$bridge" up

# Off loopback the API is TLS: the server is its own CA, and each host's
# agent proves its node with a certificate from it (mutual TLS).
for i in 1 2; do "$TESSERA" certs issue --ca-dir "$WORK/server/tls" --name "host$i" --out "$WORK/host$i" >/dev/null; done
export TESSERA_CA_FILE=$WORK/server/tls/ca.crt
SERVER_PORT=0
"$TESSERA" server --listen "10.$tag.0.1:0" --no-auth --data-dir "$WORK/server" >>"$WORK/server.log" 2>&1 &
SERVER_PID=$!
PIDS+=("$SERVER_PID")
disown "$SERVER_PID"
wait_until 10 grep -q "listening on" "$WORK/server.log"
SERVER_URL=$(grep -o 'listening on https://[0-9.:]*' "$WORK/server.log" | sed 's/listening on //')
[ -n "$SERVER_URL" ] || fail "the server listens with TLS off loopback: $(cat "$WORK/server.log")"
export TESSERA_SERVER=$SERVER_URL

for i in 1 2; do
  ns="tns$tag-$i"
  netns_host "$ns" "tvh$tag-$i" "$bridge" "10.$tag.0.1$i/24"
  ip netns exec "$ns" "$TESSERA" agent --server "$SERVER_URL" --name "host$i" --address "10.$tag.0.1$i" \
    --ca-file "$TESSERA_CA_FILE" --cert-file "$WORK/host$i.crt" --key-file "$WORK/host$i.key" --data-dir "$WORK/host$i" --fake-gpus "$(fake_gpus "host$i" 4)" --heartbeat 0.5 --no-cgroups >>"$WORK/host$i.log" 2>&1 &
  PIDS+=("$!")
  disown "$!"
done
wait_until 20 nodes_ready 2
# The server sees each agent from its own address.
[ "$("$TESSERA" nodes -o json | jq -r '[.nodes[].address] | sort | join(" ")')" = "10.$tag.0.11 10.$tag.0.12" ] || fail "node addresses"

id=$(submit --name across --gpus 4 --tasks 2 -- python3 "$E2E_DIR/../../examples/jobs/rendezvous.py")
wait_until 60 job_state_is "$id" succeeded
master=$(job_field "$id" '.tasks[0].node')
want="10.$tag.0.1${master#host}"
"$TESSERA" logs "$id" --task task-1 | grep -q "rendezvous ok with world 2 at $want:" || fail "rank 1 should have met rank 0 at $want: $("$TESSERA" logs "$id" --task task-1)"
log "ranks met across namespaces at $want"
