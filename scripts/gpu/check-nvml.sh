#!/usr/bin/env bash
# On a machine with NVIDIA GPUs: builds tessera-gpu-probe (release preset), prints
# what Tessera's NVML layer discovers (JSON: GPUs, a telemetry sample), and checks
# it against nvidia-smi -L: the same GPUs, in the same order, with the same UUIDs
# and names; and, where the driver reports NVLink fabrics, each GPU's fabric
# domain against nvidia-smi -q; and the MIG devices (profile and UUID)
# against nvidia-smi -L's MIG lines. Exits non-zero when they disagree, or when the driver, NVML or
# nvidia-smi is missing. Needs no CUDA toolkit: NVML is loaded at run time.
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() { echo "check-nvml: $*" >&2; exit 1; }

command -v nvidia-smi >/dev/null || fail "nvidia-smi not found: run this on a machine with the NVIDIA driver"
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target tessera-gpu-probe

probe=$(build/release/tessera-gpu-probe) || fail "tessera-gpu-probe could not use NVML (its message is above)"
echo "$probe"

# The probe prints one field per line; nvidia-smi -L prints
# "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)", plus indented MIG lines we skip.
field() { grep -o "\"$1\": \"[^\"]*\"" <<<"$probe" | cut -d'"' -f4 || true; }
listing=$(nvidia-smi -L) || fail "nvidia-smi -L failed"
want_uuids=$(sed -n 's/^GPU [0-9]*: .* (UUID: \(GPU-[^)]*\))$/\1/p' <<<"$listing")
want_names=$(sed -n 's/^GPU [0-9]*: \(.*\) (UUID: GPU-[^)]*)$/\1/p' <<<"$listing")
got_uuids=$(field uuid)
got_names=$(field name)

count() { if [ -z "$1" ]; then echo 0; else wc -l <<<"$1"; fi; }
want_count=$(count "$want_uuids")
got_count=$(count "$got_uuids")
[ "$got_count" -eq "$want_count" ] || fail "Tessera sees $got_count GPUs, nvidia-smi -L lists $want_count"
[ "$got_uuids" = "$want_uuids" ] || fail "UUIDs differ:"$'\n'"tessera:"$'\n'"$got_uuids"$'\n'"nvidia-smi:"$'\n'"$want_uuids"
[ "$got_names" = "$want_names" ] || fail "names differ:"$'\n'"tessera:"$'\n'"$got_names"$'\n'"nvidia-smi:"$'\n'"$want_names"

# Multi-node NVLink (GB200 NVL72 and the like): each GPU's fabric domain as
# Tessera names it from NVML ("fabric-<cluster UUID>.<clique>", empty outside
# a fabric) against nvidia-smi -q's Fabric section (State, Status, CliqueId,
# ClusterUUID). Drivers without that section are skipped.
smi_q=$(nvidia-smi -q)
if grep -q '^ *ClusterUUID' <<<"$smi_q"; then
  want_fabric=$(awk -F' *: *' '
    /^GPU [0-9A-Fa-f]+:/ { if (seen) print name; seen = 1; name = ""; state = status = clique = "" }
    /^ *Fabric *$/ { fabric = 1; next }
    fabric && /^ *State / { state = $2 }
    fabric && /^ *Status / { status = $2 }
    fabric && /^ *CliqueId / { clique = $2 }
    fabric && /^ *ClusterUUID / { uuid = tolower($2); gsub("-", "", uuid); fabric = 0
                                  name = (state == "Completed" && status == "Success") ? "fabric-" uuid "." clique : "" }
    END { if (seen) print name }' <<<"$smi_q")
  got_fabric=$(field fabricDomain)
  [ "$got_fabric" = "$want_fabric" ] ||
    fail "fabric domains differ:"$'\n'"tessera:"$'\n'"$got_fabric"$'\n'"nvidia-smi -q:"$'\n'"$want_fabric"
  echo "check-nvml: fabric domains agree: $(sort -u <<<"$got_fabric" | paste -sd' ' | sed 's/^ *$/none (no GPU in an NVLink fabric)/')"
else
  echo "check-nvml: nvidia-smi -q shows no fabric information (driver before 535): fabric domains not checked"
fi
# MIG: "  MIG 1g.10gb     Device  0: (UUID: MIG-...)" under each GPU in MIG
# mode, against the devices Tessera found ("migProfile" and "migUuid", in
# pairs). Compared as sorted lists: the two may number the devices apart.
want_mig=$(sed -n 's/^ *MIG \([^ ]*\) *Device *[0-9]*: (UUID: \(MIG-[^)]*\))$/\1 \2/p' <<<"$listing" | sort)
got_mig=$(paste -d' ' <(field migProfile) <(field migUuid) | sed '/^ *$/d' | sort)
[ "$got_mig" = "$want_mig" ] || fail "MIG devices differ:"$'\n'"tessera:"$'\n'"$got_mig"$'\n'"nvidia-smi -L:"$'\n'"$want_mig"
echo "check-nvml: MIG devices agree: $(count "$got_mig")"
echo "check-nvml: OK: $got_count GPUs, UUIDs and names in nvidia-smi's order"
