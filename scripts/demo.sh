#!/usr/bin/env bash
# The main job on its embedded default: build Tessera (release), bring up a
# local cluster with `tessera up` (a server with SQLite state and three agents;
# fake GPUs where the machine has no NVIDIA driver, real processes either
# way), submit a 2-node gang that really rendezvouses over TCP, a
# quarter-GPU job and a container job (its image built offline from
# busybox-static), and show them running, their placement and their output.
# The cluster is stopped at the end; `tessera up` alone keeps one running.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target tessera
tessera=build/release/tessera
# The container job's image, an OCI layout on the node (examples/jobs/container.yaml).
images=/var/tmp/tessera-examples
rm -rf "$images/busybox"
mkdir -p "$images"
scripts/busybox-image.sh "$images/busybox" 1 >/dev/null

data=$(mktemp -d "${TMPDIR:-/tmp}/tessera-demo.XXXXXX")
port=$((20000 + RANDOM % 20000))
export TESSERA_SERVER=https://127.0.0.1:$port
export TESSERA_TOKEN_FILE=$data/admin.token  # tessera up writes a cluster-admin token there
export TESSERA_CA_FILE=$data/tls/ca.crt      # and the CA of its TLS certificate
"$tessera" up --nodes 3 --gpus-per-node 8 --data-dir "$data" --listen "127.0.0.1:$port" 2>"$data/up.log" &
up=$!
trap 'kill -INT $up 2>/dev/null; wait $up 2>/dev/null; rm -rf "$data"' EXIT
# Waits up to LIMIT seconds for a command to succeed; fails naming WHAT, with the cluster's log.
wait_for() {
  local limit=$1 what=$2 deadline=$((SECONDS + $1))
  shift 2
  until "$@"; do
    [ $SECONDS -lt $deadline ] || { echo "demo: no $what after $limit s; tessera up said:" >&2; cat "$data/up.log" >&2; exit 1; }
    sleep 0.2
  done
}
cluster_ready() { [ -s "$data/admin.token" ] && "$tessera" nodes -o json 2>/dev/null | grep -q '"ready"'; }
all_placed() { [ "$("$tessera" jobs --state pending -o json | grep -c '"id"')$("$tessera" jobs --state starting -o json | grep -c '"id"')" = 00 ]; }
all_ended() { [ "$("$tessera" jobs -o json | grep -c '"id"')" -eq 0 ]; }
wait_for 60 "ready node" cluster_ready
sleep 0.5
step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }
head -n 4 "$data/up.log" | sed 's/^/  /'

step "$tessera" nodes
step "$tessera" submit examples/jobs/gang-ddp.yaml examples/jobs/notebook-quarter.yaml examples/jobs/container.yaml
# Both placed and every task reported (neither pending nor starting).
wait_for 60 "running jobs" all_placed
step "$tessera" jobs
step "$tessera" describe 0
sleep 2
step "$tessera" logs 0 --task worker-1
step "$tessera" logs 1
step "$tessera" logs 2
step "$tessera" top --once
printf '\nwaiting for the jobs to finish...\n'
wait_for 120 "end of the jobs" all_ended
step "$tessera" jobs --all
