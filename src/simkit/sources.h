// Where a simulation's workload and cluster come from, as written on the
// command line:
//   workloads  philly:PATH, alibaba:PODS.csv, jsonl:PATH, synthetic:N,
//              gang:GPUS:DURATION
//   clusters   a Cluster YAML file, a shape ("16 nodes x 8 GPUs"), or
//              alibaba:NODES.csv
// The Helios preset (Hu et al., SC'21) selects Philly's jobs submitted
// 2017-10-01 .. 2017-11-30 in 11 VCs and gives each VC its published size.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/cluster.h"
#include "simkit/workload.h"

namespace tessera::simkit {

struct SourceOptions {
  bool helios = false;        // Philly: the Helios window and VCs
  double load = 1.0;          // Philly: divide submit offsets by this
  std::uint64_t seed = 1;     // synthetic
  double rate = 0.01;         // synthetic: arrivals per second
};

Result<Workload> LoadWorkloadSource(const std::string& source, const SourceOptions& options);
Result<std::vector<model::NodeSpec>> LoadNodeSource(const std::string& source);
Result<model::Cluster> LoadClusterSource(const std::string& source);

// Helios' VCs and their sizes in 8-GPU nodes.
const std::map<std::string, std::int32_t>& HeliosVcNodes();

}  // namespace tessera::simkit
