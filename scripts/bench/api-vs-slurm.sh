#!/usr/bin/env bash
# The API under a backlog, side by side with Slurm (docs/benchmarks.md): the
# same number of 8-GPU nodes, each held by one long job, and PENDING one-GPU
# jobs waiting behind them. Slurm (../shared/peers/slurm, root) answers
# `squeue -j ID` (one job), `squeue` (the list) and `sbatch` (one more job)
# SAMPLES times each while its scheduler works the backlog; then
# `tessera bench api` measures the same three requests on a Tessera server
# with the same cluster and backlog. Prints p50/p99 in ms of each and the
# ratios. Slurm's figures include starting its client and munge's
# credential (what a user waits for); Tessera's are the API's own over a
# kept-alive connection: compare the p99s with that in mind.
#   NODES=128 PENDING=20000 scripts/bench/api-vs-slurm.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")/../.." && pwd)
T=${TESSERA:-$HERE/build/release/tessera}
PEERS=${PEERS:-$HERE/../shared/peers/slurm}
NODES=${NODES:-128}
PENDING=${PENDING:-20000}
SAMPLES=${SAMPLES:-50}
OUT=$(mktemp -d)
cd "$OUT"  # where sbatch leaves its jobs' slurm-N.out

deadline() {  # deadline SECONDS WHAT CMD...: runs CMD until it succeeds, or fails naming WHAT
  local limit=$1 what=$2 t=0; shift 2
  until "$@"; do sleep 1; t=$((t + 1)); [ $t -lt "$limit" ] || { echo "api-vs-slurm: timed out waiting for $what" >&2; return 1; }; done
}
# p50 and p99 of the millisecond figures in a file, one per line.
quantiles() { sort -n "$1" | awk '{v[NR]=$1} END {printf "%.1f %.1f", v[int((NR-1)*0.5)+1], v[int((NR-1)*0.99)+1]}'; }
ms_of() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000 )) | awk '{printf "%.1f\n", $1/1000}'; }

# --- Slurm -------------------------------------------------------------------------
NODES=$NODES PROFILE=tuned "$PEERS/start-slurm.sh" >"$OUT/slurm-start.log"
trap '"$PEERS/stop-slurm.sh" >/dev/null 2>&1 || true' EXIT
source "${TMPDIR:-/tmp}/peer-slurm/run/env.sh"
# Four submitters at a time, as bench-slurm.sh does; each sh gets the job's number as $1, unused.
seq "$NODES" | xargs -P 4 -n 1 sh -c 'sbatch -Q --gres=gpu:8 -N1 --exclusive -J fill --wrap "sleep 100000"' _
deadline 300 "the fill jobs to run" sh -c "[ \"\$(squeue -h -t R | wc -l)\" -ge $NODES ]"
seq "$PENDING" | xargs -P 4 -n 1 sh -c 'sbatch -Q --gres=gpu:1 -J backlog --wrap "sleep 1"' _
one=$(squeue -h -t PD -o %i | sed -n 1p)  # sed reads it all: no SIGPIPE under pipefail
for i in $(seq "$SAMPLES"); do
  ms_of squeue -j "$one" >>"$OUT/slurm-get"
  ms_of squeue >>"$OUT/slurm-list"
  ms_of sbatch -Q --gres=gpu:1 -J window --wrap 'sleep 1' >>"$OUT/slurm-submit"
done
"$PEERS/stop-slurm.sh" >/dev/null
trap - EXIT

# --- Tessera -----------------------------------------------------------------------
"$T" bench api --gpus $((NODES * 8)) --pending "$PENDING" --seconds 20 --json >"$OUT/tessera.json"
read -r sg50 sg99 <<<"$(quantiles "$OUT/slurm-get")"
read -r sl50 sl99 <<<"$(quantiles "$OUT/slurm-list")"
read -r ss50 ss99 <<<"$(quantiles "$OUT/slurm-submit")"
jq -c --argjson sg50 "$sg50" --argjson sg99 "$sg99" --argjson sl50 "$sl50" --argjson sl99 "$sl99" \
   --argjson ss50 "$ss50" --argjson ss99 "$ss99" --argjson nodes "$NODES" --argjson pending "$PENDING" '{
  nodes: $nodes, pending: $pending,
  slurm_squeue_job_ms: [$sg50, $sg99], slurm_squeue_ms: [$sl50, $sl99], slurm_sbatch_ms: [$ss50, $ss99],
  tessera_get_ms: [.api_get_p50_ms, .api_get_p99_ms], tessera_list_ms: [.api_list_p50_ms, .api_list_p99_ms],
  tessera_submit_ms: [.api_submit_p50_ms, .api_submit_p99_ms], tessera_cycle_ms: .cycle_ms,
  p99_ratio_get: (.api_get_p99_ms / $sg99), p99_ratio_list: (.api_list_p99_ms / $sl99), p99_ratio_submit: (.api_submit_p99_ms / $ss99)}' \
   "$OUT/tessera.json"
rm -rf "$OUT"
