// Alibaba's 2023 GPU-sharing trace (Weng et al., ATC'23; the format sample is
// in ../shared/traces/alibaba-2023-format/), read unchanged from its CSVs:
//   nodes: sn,cpu_milli,memory_mib,gpu,model
//   pods:  name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
//          creation_time,deletion_time,scheduled_time
// A pod is one task: num_gpu whole GPUs, or with num_gpu 1 a share of one GPU
// in thousandths (gpu_milli 460 = 0.46 GPU), or none (CPU only). gpu_spec
// lists the accepted GPU models, '|'-separated; empty accepts any. Times are
// seconds from the trace start: a pod is submitted at creation_time and runs
// from scheduled_time (or creation, if never scheduled) to deletion_time (or
// the trace's end, if it was still running). qos is kept as the pod's group.
// Malformed rows are errors naming file:line and the reason.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "model/cluster.h"
#include "simkit/workload.h"

namespace tessera::simkit {

// Nodes are grouped 32 to a leaf in file order (the trace has no topology).
// GPU memory is not in the trace: the published size of each model is used.
Result<std::vector<model::NodeSpec>> LoadAlibabaNodes(const std::string& path);
Result<Workload> LoadAlibabaPods(const std::string& path);

}  // namespace tessera::simkit
