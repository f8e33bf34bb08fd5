// The packing study of the FGD paper (Weng et al., ATC'23), run through the
// scheduling core: per seed, every pod of the workload arrives once in an
// order shuffled by that seed, then pods drawn from it with replacement keep
// arriving until the GPU demand that arrived reaches `demand` times the
// cluster's GPUs. Nothing departs; CPU, memory and GPU models constrain
// placement as well as GPUs; a pod that fits nowhere is dropped. What counts
// is the share of the cluster's GPU capacity (milli-GPUs) allocated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/cluster.h"
#include "simkit/workload.h"

namespace tessera::simkit {

struct PackingOptions {
  double demand = 1.3;
  int seeds = 10;
  std::string placement = "topology-packing";  // a Placement plugin: topology-packing, fgd, random
  int curve_points = 100;
};

struct PackingCurve {
  std::vector<std::pair<double, double>> points;  // (arrived GPU demand, allocated), shares of capacity
  double allocated = 0;                           // allocated share once `demand` arrived
  std::int64_t arrived = 0, dropped = 0;          // pods
};

struct PackingResult {
  std::vector<PackingCurve> seeds;
  double mean_allocated = 0;
};

Result<PackingResult> RunPacking(const std::vector<model::NodeSpec>& nodes, const Workload& pods, const PackingOptions& options);

}  // namespace tessera::simkit
