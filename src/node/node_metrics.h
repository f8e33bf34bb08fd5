// The agent's /metrics (docs/observability.md): GPU telemetry under
// dcgm-exporter's names, units and labels (gpu, UUID, device, modelName,
// Hostname), so dashboards and alerts written for it work unchanged; and what
// dcgm-exporter cannot say: which jobs hold each GPU and how much of it, and
// how much memory each job holds on a shared GPU (read from the vGPU ledger),
// so a GPU shared by several jobs is attributed to each of them.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "node/gpu/gpu_provider.h"

namespace tessera::node {

// One task's hold on one GPU.
struct GpuTenant {
  int gpu = 0;
  std::string job;       // the job id
  std::string job_name;
  std::string queue;
  std::string user;
  std::string task;      // "worker-3"
  double share = 1;      // of the GPU, 0..1
  std::int64_t memory_limit = 0;  // bytes; 0: the whole GPU
  std::int64_t memory_used = -1;  // bytes, where known (vGPU ledger, or a GPU it holds alone); -1: unknown
};

struct NodeTelemetry {
  std::string hostname;
  std::vector<GpuInfo> gpus;
  std::vector<GpuSample> samples;  // by GPU index; empty until the first sample
  std::map<int, std::int64_t> last_xid;
  std::map<int, std::int64_t> xid_count;
  std::set<int> out_of_service;  // GPUs a fault took out of service (node/health/gpu_health.h)
  std::vector<GpuTenant> tenants;
};

std::string RenderNodeMetrics(const NodeTelemetry& telemetry);

}  // namespace tessera::node
