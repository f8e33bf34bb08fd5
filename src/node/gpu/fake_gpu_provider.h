// Fake GPUs for machines without any: the file that describes them, the fault
// file that injects faults into a running agent, and the parser.
//
// The fake file (LoadFakeGpus). Every key is optional; an unknown key, a value
// of the wrong type or out of range is an error "FILE:LINE:COL: FIELD: reason".
//
//   gpus: 8                 # 0 to 1024
//   model: H100             # GpuInfo.model; GpuInfo.name is "NVIDIA H100 80Gi (fake)"
//   memory: 80Gi            # per GPU
//   nvlinkDomainSize: 8     # GPUs per NVLink domain, all-to-all inside as through an
//                           # NVSwitch; 4 with 8 GPUs makes two islands; 0 or 1: no NVLink
//   numaNodes: 2            # the GPUs are split among them in index order
//   mig: {0: [1g.10gb, 3g.40gb]}  # GPUs in MIG mode and their devices' profiles;
//                           # each device gets a MIG-... UUID of its own
//   utilization: 35         # percent reported by Sample() for every GPU, or per GPU:
//                           #   utilization: {0: 90, 1: 0}   (unlisted GPUs report 0)
//   faults:                 # delivered by PollFaults once `after` has passed since load
//     - {gpu: 3, kind: xid, code: 79, after: 5s}
//     - {gpu: 1, kind: ecc-double-bit}
//
// A fault needs `gpu` and `kind` (xid, ecc-double-bit, ecc-single-bit) and may
// have `code` (the Xid number, default 0), `after` (a duration, default 0s) and
// `detail` (text; default FaultDetail(kind, code)).
//
// The fault file: FILE.faults beside the fake file (for a fake made in memory,
// FakeGpuSpec.fault_file), which need not exist. A test appends faults to it
// while the agent runs, one per line, either as YAML list items or as JSON:
//
//   echo '- {gpu: 2, kind: xid, code: 48}' >> node.yaml.faults
//   echo '{"gpu": 2, "kind": "ecc-double-bit"}' >> node.yaml.faults
//
// Fields are those of `faults` above; `after` also counts from load, so a fault
// without one is delivered by the next PollFaults. PollFaults reads only
// complete lines, each once. A line it cannot read is reported on stderr as
// "FILE:LINE:COL: reason" and skipped: PollFaults has no error to return, and
// the fault file is a test's tool.
#pragma once

#include <string_view>

#include "base/status.h"
#include "node/gpu/gpu_provider.h"

namespace tessera::node {

// Reads the fake file's text. `source` names it in messages and becomes the
// spec's label; fault_file is left empty.
Result<FakeGpuSpec> ParseFakeGpuSpec(std::string_view text, std::string_view source);

}  // namespace tessera::node
