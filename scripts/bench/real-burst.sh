#!/usr/bin/env bash
# Slurm's `burst` with real agents and real processes: `tessera up` with
# NODES x GPN fake GPUs, N one-GPU `sleep 1` jobs submitted while every node is
# cordoned, then every node uncordoned. Prints when the first and the last job
# started after the release, and the start rate in between (docs/benchmarks.md).
#   NODES=64 GPN=16 N=2000 scripts/bench/real-burst.sh
set -euo pipefail
T=${TESSERA:-$(cd "$(dirname "$0")/../.." && pwd)/build/release/tessera}  # TESSERA=other/binary to compare
N=${N:-500}
D=$(mktemp -d)
$T up --nodes ${NODES:-16} --gpus-per-node ${GPN:-8} --data-dir $D --listen 127.0.0.1:7272 > $D/up.log 2>&1 &
UP=$!
export TESSERA_SERVER=https://127.0.0.1:7272 TESSERA_CA_FILE=$D/tls/ca.crt TESSERA_TOKEN_FILE=$D/admin.token
# Waits up to LIMIT seconds for a condition; fails naming it, with the
# cluster's log, then or as soon as tessera up has exited (a refused flag).
wait_for() {
  local limit=$1 what=$2 deadline=$((SECONDS + $1))
  shift 2
  until "$@"; do
    kill -0 $UP 2>/dev/null || { echo "real-burst: tessera up exited before $what; it said:" >&2; cat $D/up.log >&2; exit 1; }
    [ $SECONDS -lt $deadline ] || { echo "real-burst: no $what after $limit s; tessera up said:" >&2; cat $D/up.log >&2; kill -INT $UP; exit 1; }
    sleep 0.2
  done
}
all_registered() { [ "$($T nodes -o json 2>/dev/null | jq '.nodes | length' 2>/dev/null || echo 0)" -eq ${NODES:-16} ]; }
all_ended() { [ "$($T jobs -o json | jq '.jobs | length')" -eq 0 ]; }
wait_for 120 "${NODES:-16} registered nodes" all_registered
nodes=$($T nodes -o json | jq -r '.nodes[].name')
$T nodes cordon $nodes >/dev/null
for i in $(seq $N); do printf 'apiVersion: tessera/v1\nkind: Job\nmetadata: {name: b%s}\nspec: {tasks: [{name: t, command: [sleep, "1"], resources: {gpus: 1}}]}\n---\n' $i; done > $D/jobs.yaml
$T submit $D/jobs.yaml > /dev/null
t0=$(date +%s%3N)
$T nodes uncordon $nodes >/dev/null  # one command, as Slurm's partition UP
wait_for $((60 + N / 10)) "end of the $N jobs" all_ended
$T jobs -a -o json | jq -c --argjson t0 $t0 '[.jobs[].runningTime] as $r | ($r|min) as $a | ($r|max) as $b | {jobs: ($r|length), first_start_after_t0_s: (($a - $t0) / 1000), last_start_after_t0_s: (($b - $t0) / 1000), started_per_s: ((($r|length) - 1) * 1000 / ($b - $a))}'
kill -INT $UP; wait $UP || true
rm -rf $D
