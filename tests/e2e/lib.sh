# Shared by the end-to-end tests: start a real `tessera server` and real
# agents (separate processes, fake GPUs) on loopback, drive them with the real
# CLI, and clean up whatever was started, whatever happens.
#
# Usage in a test:  source "$(dirname "$0")/lib.sh" "$1"   # $1: the tessera binary
set -euo pipefail

TESSERA=$(realpath "$1")
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tessera-e2e.XXXXXX")
PIDS=()
CLEANUPS=()
SERVER_PID=""
SERVER_URL=""
SERVER_PORT=""

cleanup() {
  local status=$?
  for c in "${CLEANUPS[@]}"; do eval "$c" || true; done
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  # Tasks a killed agent left behind carry the test's marker.
  pkill -9 -f "e2e-$$" 2>/dev/null || true
  if [ "$status" -ne 0 ]; then
    echo "--- test failed ($status); logs in $WORK" >&2
    for f in "$WORK"/*.log; do echo "=== $f" >&2; tail -n 30 "$f" >&2; done
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
log() { echo "[$(date +%T)] $*" >&2; }

# start_server [extra flags...]: a server on a free port with state in $WORK/server.
start_server() {
  local port=${SERVER_PORT:-0}
  "$TESSERA" server --listen "127.0.0.1:$port" --data-dir "$WORK/server" "$@" >>"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  disown "$SERVER_PID"  # killed on purpose: no "Killed" notice from bash
  for _ in $(seq 100); do
    SERVER_URL=$(grep -o 'listening on http://[0-9.:]*' "$WORK/server.log" | tail -n1 | sed 's/listening on //') || true
    if [ -n "$SERVER_URL" ] && curl -sf "$SERVER_URL/v1/healthz" >/dev/null; then
      SERVER_PORT=${SERVER_URL##*:}
      export TESSERA_SERVER=$SERVER_URL
      return 0
    fi
    sleep 0.1
  done
  fail "the server did not start"
}

# start_etcd: a one-member etcd (Debian's etcd-server) on free loopback ports,
# with the limits docs/fault-tolerance.md asks for; sets ETCD_URL.
start_etcd() {
  command -v etcd >/dev/null || fail "etcd is missing: scripts/install-deps.sh installs etcd-server"
  local client peer
  read -r client peer < <(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
  etcd --data-dir "$WORK/etcd" --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "default=http://127.0.0.1:$peer" --max-txn-ops 100000 --max-request-bytes 67108864 >>"$WORK/etcd.log" 2>&1 &
  PIDS+=("$!")
  disown "$!"
  ETCD_URL="etcd://127.0.0.1:$client"
  wait_until 20 curl -sf -X POST -d '{"key": "AA=="}' "http://127.0.0.1:$client/v3/kv/range" -o /dev/null
}

# fake_gpus NAME COUNT: a fake GPU file for one node.
fake_gpus() {
  printf 'gpus: %s\nmodel: H100\nmemory: 80Gi\nnvlinkDomainSize: %s\n' "$2" "$2" >"$WORK/$1.gpus.yaml"
  echo "$WORK/$1.gpus.yaml"
}

# start_agent NAME GPUS [extra flags...]: an agent process; its pid in AGENT_PID[NAME].
declare -A AGENT_PID
start_agent() {
  local name=$1 gpus=$2
  shift 2
  "$TESSERA" agent --server "$SERVER_URL" --name "$name" --address 127.0.0.1 --data-dir "$WORK/$name" \
    --fake-gpus "$(fake_gpus "$name" "$gpus")" --heartbeat 0.5 --grace 2 --no-cgroups --metrics-listen 127.0.0.1:0 "$@" >>"$WORK/$name.log" 2>&1 &
  AGENT_PID[$name]=$!
  PIDS+=("$!")
  disown "$!"
}

# wait_until SECONDS COMMAND...: polls the command until it succeeds.
wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -lt $deadline ] || fail "timed out waiting for: $*"
    sleep 0.2
  done
}

nodes_ready() { [ "$("$TESSERA" nodes -o json | jq '[.nodes[] | select(.state == "ready")] | length')" -ge "$1" ]; }
job_json() { "$TESSERA" describe -o json "$1"; }
job_field() { job_json "$1" | jq -r "$2"; }
job_state_is() { [ "$(job_field "$1" .state)" = "$2" ]; }

# submit FILE: prints the new job's id.
submit() { "$TESSERA" submit -o json "$@" | jq -r '.jobs[0].id'; }
