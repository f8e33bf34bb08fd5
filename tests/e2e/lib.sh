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
  # Tasks a killed agent left behind carry the test's marker, e2e-PID: not
  # followed by a digit, or a test would kill the tasks of one whose pid
  # its own begins (an array element of e2e_job_arrays died so, with 137).
  pkill -9 -f "e2e-$$([^0-9]|\$)" 2>/dev/null || true
  # The task state roots on tmpfs of this test's agents (killed, they could not remove them).
  for owner in /run/tessera-agent-*/data-dir /dev/shm/tessera-agent-*/data-dir; do
    [ -f "$owner" ] && [[ "$(cat "$owner")" == "$WORK"* ]] && rm -rf "$(dirname "$owner")"
  done
  if [ "$status" -ne 0 ]; then
    echo "--- test failed ($status); logs in $WORK" >&2
    for f in "$WORK"/*.log; do echo "=== $f" >&2; tail -n 30 "$f" >&2; done
  elif [ -n "${TESSERA_E2E_KEEP:-}" ]; then
    echo "--- logs kept in $WORK (TESSERA_E2E_KEEP)" >&2
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
log() { echo "[$(date +%T)] $*" >&2; }

# start_server [extra flags...]: a server on a free port with state in
# $WORK/server, plain HTTP on loopback; with SERVER_TLS=1, TLS from the
# server's own CA ($WORK/server/tls/ca.crt, exported as TESSERA_CA_FILE).
start_server() {
  local port=${SERVER_PORT:-0} transport=(--plain-http)
  if [ -n "${SERVER_TLS:-}" ]; then
    transport=()
    export TESSERA_CA_FILE=$WORK/server/tls/ca.crt
  fi
  "$TESSERA" server --listen "127.0.0.1:$port" --data-dir "$WORK/server" "${transport[@]}" "$@" >>"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  disown "$SERVER_PID"  # killed on purpose: no "Killed" notice from bash
  for _ in $(seq 100); do
    SERVER_URL=$(grep -o 'listening on https\?://[0-9.:]*' "$WORK/server.log" | tail -n1 | sed 's/listening on //') || true
    if [ -n "$SERVER_URL" ] && curl -sf ${SERVER_TLS:+--cacert "$TESSERA_CA_FILE"} "$SERVER_URL/v1/healthz" >/dev/null; then
      SERVER_PORT=${SERVER_URL##*:}
      export TESSERA_SERVER=$SERVER_URL
      return 0
    fi
    sleep 0.1
  done
  fail "the server did not start"
}

# netns_host NS VETH BRIDGE ADDRESS/PREFIX: a network namespace as a host of
# its own, its eth0 (ADDRESS) on BRIDGE through the veth VETH; deleted at exit.
netns_host() {
  ip netns add "$1"
  CLEANUPS+=("ip netns del $1")
  ip link add "$2" type veth peer name eth0 netns "$1"
  ip link set "$2" master "$3" up
  ip -n "$1" addr add "$4" dev eth0
  ip -n "$1" link set eth0 up
  ip -n "$1" link set lo up
}

# free_ports N: N free TCP ports on loopback, on one line.
free_ports() {
  python3 -c 'import socket, sys
s = [socket.socket() for _ in range(int(sys.argv[1]))]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])' "$1"
}

# start_etcd [MEMBERS]: an etcd cluster (Debian's etcd-server, one member by
# default) on free loopback ports, with the limits and the election timing
# docs/fault-tolerance.md recommends; sets ETCD_URL (every member) and
# ETCD_PID[i]. kill_etcd_member I and restart_etcd_member I crash and revive one.
declare -a ETCD_PID ETCD_CLIENT ETCD_PEER
ETCD_CLUSTER=""
start_etcd() {
  command -v etcd >/dev/null || fail "etcd is missing: scripts/install-deps.sh installs etcd-server"
  local members=${1:-1} i ports
  read -r -a ports < <(free_ports $((2 * members)))
  local endpoints=""
  for ((i = 0; i < members; i++)); do
    ETCD_CLIENT[i]=${ports[2 * i]}
    ETCD_PEER[i]=${ports[2 * i + 1]}
    ETCD_CLUSTER+="${ETCD_CLUSTER:+,}m$i=http://127.0.0.1:${ETCD_PEER[i]}"
    endpoints+="${endpoints:+,}127.0.0.1:${ETCD_CLIENT[i]}"
  done
  ETCD_URL="etcd://$endpoints"
  for ((i = 0; i < members; i++)); do launch_etcd_member "$i" new; done
  wait_until 30 curl -sf -X POST -d '{"key": "AA=="}' "http://127.0.0.1:${ETCD_CLIENT[0]}/v3/kv/range" -o /dev/null
}
launch_etcd_member() {
  local i=$1
  etcd --name "m$i" --data-dir "$WORK/etcd-$i" --listen-client-urls "http://127.0.0.1:${ETCD_CLIENT[i]}" \
    --advertise-client-urls "http://127.0.0.1:${ETCD_CLIENT[i]}" --listen-peer-urls "http://127.0.0.1:${ETCD_PEER[i]}" \
    --initial-advertise-peer-urls "http://127.0.0.1:${ETCD_PEER[i]}" --initial-cluster "$ETCD_CLUSTER" --initial-cluster-state "$2" \
    --heartbeat-interval 50 --election-timeout 500 --max-txn-ops 100000 --max-request-bytes 67108864 >>"$WORK/etcd-$i.log" 2>&1 &
  ETCD_PID[i]=$!
  PIDS+=("$!")
  disown "$!"
}
kill_etcd_member() { kill -9 "${ETCD_PID[$1]}"; }
restart_etcd_member() { launch_etcd_member "$1" existing; }

# fake_gpus NAME COUNT: a fake GPU file for one node.
fake_gpus() {
  printf 'gpus: %s\nmodel: H100\nmemory: 80Gi\nnvlinkDomainSize: %s\n' "$2" "$2" >"$WORK/$1.gpus.yaml"
  [ -z "${FAKE_GPU_EXTRA:-}" ] || echo "$FAKE_GPU_EXTRA" >>"$WORK/$1.gpus.yaml"  # more keys, e.g. a fabric
  echo "$WORK/$1.gpus.yaml"
}

# start_agent NAME GPUS [extra flags...]: an agent process; its pid in AGENT_PID[NAME].
# Tasks run without cgroups unless AGENT_CGROUPS is set (AGENT_CGROUPS=1).
declare -A AGENT_PID
start_agent() {
  local name=$1 gpus=$2
  shift 2
  "$TESSERA" agent --server "$SERVER_URL" --name "$name" --address 127.0.0.1 --data-dir "$WORK/$name" \
    --fake-gpus "$(fake_gpus "$name" "$gpus")" --heartbeat 0.5 --grace 2 $([ -n "${AGENT_CGROUPS:-}" ] || echo --no-cgroups) --metrics-listen 127.0.0.1:0 "$@" >>"$WORK/$name.log" 2>&1 &
  AGENT_PID[$name]=$!
  PIDS+=("$!")
  disown "$!"
}

# start_up NODES GPUS_PER_NODE [extra flags...]: `tessera up` on a free port
# (TLS from its own CA, access control on, state in $WORK/up), with
# TESSERA_SERVER, TESSERA_CA_FILE and TESSERA_TOKEN_FILE exported for the
# CLI; returns once its nodes are ready.
start_up() {
  local nodes=$1 gpus=$2 port
  shift 2
  read -r port < <(free_ports 1)
  "$TESSERA" up --nodes "$nodes" --gpus-per-node "$gpus" --data-dir "$WORK/up" --listen "127.0.0.1:$port" "$@" >>"$WORK/up.log" 2>&1 &
  UP_PID=$!
  PIDS+=("$UP_PID")
  disown "$UP_PID"
  # Ctrl-C stops its agents and their tasks; cleanup's kill -9 only if that hangs.
  CLEANUPS+=("kill -INT $UP_PID 2>/dev/null; for _ in \$(seq 50); do kill -0 $UP_PID 2>/dev/null || break; sleep 0.1; done")
  export TESSERA_SERVER=https://127.0.0.1:$port TESSERA_CA_FILE=$WORK/up/tls/ca.crt TESSERA_TOKEN_FILE=$WORK/up/admin.token
  wait_until 30 test -s "$TESSERA_TOKEN_FILE"
  wait_until 30 nodes_ready "$nodes"
}

# Whole seconds since boot: a monotonic clock. $SECONDS follows the wall
# clock, and a clock step on a shared machine once ended a 20 s wait of
# e2e_gpu_health after 7 s (ctest's own, monotonic, timing).
uptime_s() {
  local up
  read -r up _ </proc/uptime
  echo "${up%.*}"
}

# wait_until SECONDS COMMAND...: polls the command until it succeeds.
wait_until() {
  local deadline=$(($(uptime_s) + $1))
  shift
  until "$@"; do
    [ "$(uptime_s)" -lt $deadline ] || fail "timed out waiting for: $*"
    sleep 0.2
  done
}

nodes_ready() { [ "$("$TESSERA" nodes -o json | jq '[.nodes[] | select(.state == "ready")] | length')" -ge "$1" ]; }
job_json() { "$TESSERA" describe -o json "$1"; }
job_field() { job_json "$1" | jq -r "$2"; }
job_state_is() { [ "$(job_field "$1" .state)" = "$2" ]; }

# submit FILE: prints the new job's id.
submit() { "$TESSERA" submit -o json "$@" | jq -r '.jobs[0].id'; }
