#!/usr/bin/env bash
# Interactive sessions, measured (docs/interactive.md, docs/benchmarks.md):
# on a `tessera up` cluster (TLS, access control) with one job serving a
# file over HTTP on its node,
#   * `tessera exec JOB -- true`: SAMPLES runs, p50 and p99 in ms (the CLI's
#     start, the TLS handshakes of both legs, the agent's launch of `true`);
#   * the file (SIZE_MB) fetched through `tessera port-forward` and directly
#     from the node's port, ROUNDS times alternating: MB/s of each and the
#     median of the ratios.
#   SAMPLES=20 SIZE_MB=200 ROUNDS=3 scripts/bench/sessions.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")/../.." && pwd)
T=${TESSERA:-$HERE/build/release/tessera}
SAMPLES=${SAMPLES:-20}
SIZE_MB=${SIZE_MB:-200}
ROUNDS=${ROUNDS:-3}
WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; done; sleep 2; for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
deadline() {  # deadline SECONDS WHAT CMD...
  local limit=$1 what=$2 t=0; shift 2
  until "$@" >/dev/null 2>&1; do sleep 0.5; t=$((t + 1)); [ $t -lt $((limit * 2)) ] || { echo "sessions: timed out waiting for $what" >&2; exit 1; }; done
}
read -r api web local_port < <(python3 -c 'import socket
s = [socket.socket() for _ in range(3)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
"$T" up --nodes 1 --gpus-per-node 2 --data-dir "$WORK/up" --listen "127.0.0.1:$api" >"$WORK/up.log" 2>&1 &
PIDS+=("$!")
export TESSERA_SERVER=https://127.0.0.1:$api TESSERA_CA_FILE=$WORK/up/tls/ca.crt TESSERA_TOKEN_FILE=$WORK/up/admin.token
deadline 60 "the cluster" "$T" nodes
mkdir -p "$WORK/www" && head -c "$((SIZE_MB << 20))" /dev/zero >"$WORK/www/blob"
job=$("$T" submit -o json --gpus 1 -- python3 -m http.server "$web" --bind 127.0.0.1 --directory "$WORK/www" | python3 -c 'import json, sys; print(json.load(sys.stdin)["jobs"][0]["id"])')
deadline 60 "job $job to run" curl -sf "http://127.0.0.1:$web/"

for _ in $(seq "$SAMPLES"); do
  t0=$(date +%s%N); "$T" exec "$job" -- true </dev/null; t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000 ))
done | sort -n | awk '{v[NR]=$1/1000} END {printf "exec -- true: p50 %.1f ms, p99 %.1f ms over %d runs\n", v[int((NR-1)*0.5)+1], v[int((NR-1)*0.99)+1], NR}'

"$T" port-forward "$job" "$local_port:$web" >"$WORK/forward.log" 2>&1 &
PIDS+=("$!")
deadline 30 "port-forward" grep -q Forwarding "$WORK/forward.log"
speed() { curl -s -o /dev/null -w '%{speed_download}' "$1" | awk '{printf "%.1f", $1 / 1048576}'; }
ratios=()
for round in $(seq "$ROUNDS"); do
  through=$(speed "http://127.0.0.1:$local_port/blob")
  direct=$(speed "http://127.0.0.1:$web/blob")
  ratio=$(awk -v a="$through" -v b="$direct" 'BEGIN {printf "%.2f", a / b}')
  ratios+=("$ratio")
  echo "round $round: port-forward $through MB/s, direct $direct MB/s, ratio $ratio"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{v[NR]=$1} END {printf "port-forward / direct, median of %d rounds: %.2f\n", NR, v[int((NR+1)/2)]}'
