#!/usr/bin/env bash
# What only a machine with an NVIDIA GPU can prove (docs/gpu-sharing.md):
#   1. NVML discovery: scripts/gpu/check-nvml.sh, then `tessera up` on NVML and
#      the agent's inventory as the server shows it;
#   2. the vGPU shim against the real driver: a driver-API program
#      (tessera-vgpu-probe, PTX kernel, no CUDA toolkit needed) sees the cap
#      as the GPU's size and cannot allocate past it, through cuGetProcAddress
#      and through dlsym; cap precision with 64 MiB chunks;
#   3. PyTorch under the shim, where torch is installed: torch.cuda.mem_get_info
#      shows the cap and a tensor past it raises OutOfMemoryError;
#   4. compute shares: the probe alone, then two probes sharing the GPU at
#      30% and 70%, each reporting kernels per second (share = rate / alone);
#   5. overhead: alloc+free and kernel launch, with and without the shim;
#   6. MIG, where a GPU is already in MIG mode: a task that asks for a profile
#      runs on one of the node's devices, named by UUID, and sees its memory;
#   7. containers: the driver's CDI spec (the one in /etc/cdi or /var/run/cdi,
#      else one nvidia-ctk generates for the check, else the one the agent
#      makes from the driver's files), and a one-GPU container task whose
#      NVML, from the driver files CDI mounts, sees exactly that GPU.
# Prints every figure; exits non-zero when a check fails, 77 without a GPU.
# Usage: scripts/gpu-check.sh   (builds build/release first; about 2 minutes)
set -uo pipefail
cd "$(dirname "$0")/.."

fail=0
check() { if eval "$2"; then echo "PASS $1"; else echo "FAIL $1"; fail=1; fi; }
field() { grep -o "$1=[0-9.]*" <<<"$2" | head -1 | cut -d= -f2; }
# await_node LOG: waits up to 10 s for tessera up's node; says so (with its log) when none came.
await_node() {
  for _ in $(seq 50); do $BIN/tessera nodes -o json 2>/dev/null | jq -e '.nodes | length >= 1' >/dev/null && return 0; sleep 0.2; done
  echo "gpu-check: tessera up had no node after 10 s (its log: $1)" >&2
  return 1
}
# await_job JOB: waits up to 60 s for the job to end; its state in $state, and a word when it did not end.
await_job() {
  state=pending
  for _ in $(seq 300); do
    state=$($BIN/tessera describe -o json "$1" | jq -r .state)
    { [ "$state" = succeeded ] || [ "$state" = failed ]; } && return 0
    sleep 0.2
  done
  echo "gpu-check: job $1 was still $state after 60 s" >&2
}

command -v nvidia-smi >/dev/null || { echo "gpu-check: no nvidia-smi: run this on a machine with an NVIDIA GPU" >&2; exit 77; }
nvidia-smi -L
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target tessera tessera-supervise tessera-gpu-probe tessera-vgpu tessera-vgpu-probe >/dev/null || exit 1
BIN=build/release
PROBE=$BIN/tessera-vgpu-probe
SHIM=$PWD/$BIN/libtessera-vgpu.so
WORK=$(mktemp -d)
trap 'kill $UP 2>/dev/null; rm -rf "$WORK"' EXIT
GiB=1073741824

echo "== 1. NVML discovery"
scripts/gpu/check-nvml.sh >"$WORK/nvml.txt" 2>&1; check "check-nvml.sh" "[ $? -eq 0 ]"
tail -3 "$WORK/nvml.txt"
port=$((20000 + RANDOM % 20000))
$BIN/tessera up --listen 127.0.0.1:$port --data-dir "$WORK/up" >"$WORK/up.log" 2>&1 &
UP=$!
export TESSERA_TOKEN_FILE=$WORK/up/admin.token  # tessera up's cluster-admin token
export TESSERA_CA_FILE=$WORK/up/tls/ca.crt        # and the CA it made for its TLS
for _ in $(seq 50); do $BIN/tessera nodes --server https://127.0.0.1:$port -o json >"$WORK/nodes.json" 2>/dev/null && \
  [ "$(jq '.nodes | length' "$WORK/nodes.json")" -ge 1 ] && break; sleep 0.2; done
jq -c '.nodes[0] | {provider, gpuSharing, gpus: [.gpus[] | {index, model, memory, uuid}]}' "$WORK/nodes.json"
check "the agent found every GPU through NVML" \
  "[ \"\$(jq '.nodes[0].gpus | length' $WORK/nodes.json)\" = \"\$(nvidia-smi -L | grep -c '^GPU ')\" ] && jq -e '.nodes[0].provider | test(\"NVML\")' $WORK/nodes.json >/dev/null"
kill $UP 2>/dev/null; wait $UP 2>/dev/null

echo "== 2. the shim against the real driver (GPU 0, cap 4 GiB)"
task() { env CUDA_VISIBLE_DEVICES=0 LD_PRELOAD="$SHIM" TESSERA_VGPU_TASK="check-$1" TESSERA_VGPU_LEDGERS="$WORK/gpu-0-$1.ledger" \
             TESSERA_VGPU_MEMORY_LIMIT=$((4 * GiB)) TESSERA_VGPU_NVML_INDICES=0 "${@:2}"; }
plain=$(CUDA_VISIBLE_DEVICES=0 $PROBE info); echo "without the shim: $plain"
for lookup in --default --direct; do
  info=$(task "info$lookup" $PROBE $lookup info); echo "with the shim ($lookup): $info"
  check "cuMemGetInfo/cuDeviceTotalMem show the cap ($lookup)" \
    "[ \"$(field total "$info")\" = $((4 * GiB)) ] && [ \"$(field device_total "$info")\" = $((4 * GiB)) ]"
  alloc=$(task "alloc$lookup" $PROBE $lookup alloc $GiB --count 10 2>"$WORK/err"); echo "$alloc"; head -1 "$WORK/err"
  check "allocation past the cap fails cleanly ($lookup)" "grep -q 'allocated=$((4 * GiB)) chunks=4 result=2' <<<'$alloc'"
done
for api in async create managed; do
  alloc=$(task "api-$api" $PROBE alloc $GiB --count 10 --api $api 2>/dev/null)
  check "cap holds for $api" "grep -q 'allocated=$((4 * GiB)) chunks=4 result=2' <<<'$alloc'"
done
precise=$(task precision $PROBE alloc $((64 << 20)) --count 1000 2>/dev/null)
echo "cap precision: $(field allocated "$precise") of $((4 * GiB)) bytes allocated in 64 MiB chunks"

echo "== 3. PyTorch under the shim"
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  torch_out=$(task torch python3 - <<'PY' 2>&1
import torch
free, total = torch.cuda.mem_get_info()
print(f"mem_get_info free={free} total={total}")
x = torch.empty(3 * 2**30, dtype=torch.uint8, device="cuda")
print("allocated 3 GiB")
try:
    y = torch.empty(2 * 2**30, dtype=torch.uint8, device="cuda")
    print("UNEXPECTED: allocated 2 GiB more past the cap")
except torch.cuda.OutOfMemoryError as e:
    print("OutOfMemoryError past the cap:", str(e).splitlines()[0][:160])
PY
)
  echo "$torch_out"
  check "torch sees the 4 GiB vGPU" "grep -q 'total=$((4 * GiB))' <<<'$torch_out'"
  check "torch cannot allocate past the cap" "grep -q 'OutOfMemoryError past the cap' <<<'$torch_out'"
else
  echo "PyTorch with CUDA is not installed here: skipped"
fi

echo "== 4. compute shares (10 s each)"
launch="launch 10 --blocks 132 --iterations 200000 --warmup 2"
alone=$(CUDA_VISIBLE_DEVICES=0 $PROBE $launch); echo "alone: $alone"
task share30 env TESSERA_VGPU_COMPUTE_PERCENT=30 $PROBE $launch >"$WORK/s30" 2>&1 &
p30=$!
task share70 env TESSERA_VGPU_COMPUTE_PERCENT=70 $PROBE $launch >"$WORK/s70" 2>&1
wait $p30
base=$(field kernels_per_s "$alone")
for s in 30 70; do
  rate=$(field kernels_per_s "$(cat "$WORK/s$s")")
  echo "asked ${s}%: $(cat "$WORK/s$s" | tail -1) -> $(awk -v r="$rate" -v b="$base" 'BEGIN{printf "%.1f", 100*r/b}')% of the GPU alone"
done

echo "== 5. overhead (median of 3)"
median() { sort -n | sed -n 2p; }
for mode in plain shim; do
  run() { if [ $mode = shim ]; then task "bench-$RANDOM" "$@"; else CUDA_VISIBLE_DEVICES=0 "$@"; fi; }
  a=$(for _ in 1 2 3; do field ns_per_alloc_free "$(run $PROBE bench-alloc 2000 $((2 << 20)))"; done | median)
  l=$(for _ in 1 2 3; do field kernels_per_s "$(run $PROBE launch 2 --blocks 1 --iterations 1)"; done | median)
  echo "$mode: alloc+free of 2 MiB ${a} ns; ${l} empty kernels/s"
done

echo "== 6. MIG (only where a GPU is already in MIG mode: this script never partitions a GPU)"
mig=$(nvidia-smi -L | sed -n 's/^ *MIG \([^ ]*\) *Device *[0-9]*: (UUID: \(MIG-[^)]*\))$/\1 \2/p' | head -1)
if [ -z "$mig" ]; then
  echo "SKIP MIG: no GPU is in MIG mode (as root: nvidia-smi -i 0 -mig 1; nvidia-smi mig -i 0 -cgi 1g.18gb -C; then rerun)"
else
  profile=${mig%% *}
  $BIN/tessera up --listen 127.0.0.1:$port --data-dir "$WORK/up-mig" >"$WORK/up-mig.log" 2>&1 &
  UP=$!
  export TESSERA_TOKEN_FILE=$WORK/up-mig/admin.token TESSERA_CA_FILE=$WORK/up-mig/tls/ca.crt TESSERA_SERVER=https://127.0.0.1:$port
  await_node "$WORK/up-mig.log"
  $BIN/tessera nodes -o json | jq -c '[.nodes[0].gpus[] | select(.mig) | {index, mig}]'
  job=$($BIN/tessera submit -o json --name mig-check --mig "$profile" -- \
        sh -c 'echo visible=$CUDA_VISIBLE_DEVICES; exec "$0" info' "$PWD/$PROBE" | jq -r '.jobs[0].id')
  await_job "$job"
  out=$($BIN/tessera logs "$job"); echo "$out"
  device=$($BIN/tessera describe -o json "$job" | jq -r '.tasks[0].migDevice // ""')
  ran=0; [ "$state" = succeeded ] && [ -n "$device" ] && grep -q "visible=$device" <<<"$out" && nvidia-smi -L | grep -q "$device" && ran=1
  check "a $profile task ran on a MIG device of the node, named by its UUID (state $state, device ${device:-none})" "[ $ran = 1 ]"
  gpu_bytes=$(( $(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1) * 1048576 ))
  seen=$(field total "$out")
  check "the task saw its device's memory (${seen:-?} bytes), not the GPU's ($gpu_bytes)" "[ -n \"$seen\" ] && [ \"${seen%.*}\" -lt $gpu_bytes ]"
  kill $UP 2>/dev/null; wait $UP 2>/dev/null
fi

echo "== 7. containers: GPUs through CDI"
if ! command -v runc >/dev/null || ! command -v umoci >/dev/null; then
  echo "SKIP containers: runc and umoci are not installed (scripts/install-deps.sh installs them)"
else
  spec=$(ls /etc/cdi/*.yaml /etc/cdi/*.json /var/run/cdi/*.yaml /var/run/cdi/*.json 2>/dev/null | head -1)
  if [ -z "$spec" ] && command -v nvidia-ctk >/dev/null; then
    spec=/var/run/cdi/tessera-gpu-check.yaml
    mkdir -p /var/run/cdi && nvidia-ctk cdi generate --output="$spec" >"$WORK/cdi.log" 2>&1
    trap 'kill $UP 2>/dev/null; rm -rf "$WORK" /var/run/cdi/tessera-gpu-check.yaml' EXIT
  fi
  if [ -n "$spec" ]; then
    check "a CDI spec for the GPUs ($spec)" "grep -q 'nvidia.com/gpu' '$spec'"
  else
    echo "no CDI spec and no nvidia-ctk: the agent makes its own from the driver's files"
  fi
  IMAGE_EXTRA=$PWD/$BIN/tessera-gpu-probe scripts/busybox-image.sh "$WORK/image" 1 >/dev/null
  $BIN/tessera up --listen 127.0.0.1:$port --data-dir "$WORK/up-ctr" >"$WORK/up-ctr.log" 2>&1 &
  UP=$!
  export TESSERA_TOKEN_FILE=$WORK/up-ctr/admin.token TESSERA_CA_FILE=$WORK/up-ctr/tls/ca.crt TESSERA_SERVER=https://127.0.0.1:$port
  await_node "$WORK/up-ctr.log"
  [ -n "$spec" ] || check "the agent made a CDI spec from the driver's files" "grep -q 'made one from the driver' '$WORK/up-ctr.log'"
  printf '%s\n' "apiVersion: tessera/v1" "kind: Job" "metadata: {name: cdi-check}" "spec:" "  tasks:" "    - name: main" \
    "      image: oci:$WORK/image:1" '      user: "1000:1000"' "      resources: {gpus: 1}" \
    "      command: [/opt/tessera/tessera-gpu-probe]" >"$WORK/ctr.yaml"
  job=$($BIN/tessera submit -o json "$WORK/ctr.yaml" | jq -r '.jobs[0].id')
  await_job "$job"
  $BIN/tessera describe -o json "$job" | jq -c '{state, tasks: [.tasks[] | {gpus, exitCode, message}]}'
  out=$($BIN/tessera logs "$job"); echo "$out" | head -20
  index=$($BIN/tessera describe -o json "$job" | jq -r '.tasks[0].gpus[0] // 0')
  uuid=$($BIN/tessera nodes -o json | jq -r ".nodes[0].gpus[] | select(.index == $index) | .uuid")
  seen=$(grep -c '"uuid"' <<<"$out")
  check "the container's NVML sees exactly its GPU ($uuid; state $state, $seen GPUs seen)" \
    "[ '$state' = succeeded ] && [ '$seen' = 1 ] && grep -q '$uuid' <<<'$out'"
  kill $UP 2>/dev/null; wait $UP 2>/dev/null
fi

exit $fail
