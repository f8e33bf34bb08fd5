#include "controlplane/inventory_spec.h"

namespace tessera::controlplane {

model::NodeSpec NodeSpecOf(const api::NodeInventory& inv) {
  model::NodeSpec spec;
  spec.name = inv.name;
  spec.gpus = static_cast<std::int32_t>(inv.gpus.size());
  if (!inv.gpus.empty()) {
    spec.gpu_model = inv.gpus.front().model;
    spec.gpu_memory = inv.gpus.front().memory;
  }
  spec.cpu_milli = inv.cpu_milli;
  spec.memory = inv.memory;
  // The groups GPU by GPU, as the agent found them (GPUs are listed in index order).
  for (const api::GpuInventory& g : inv.gpus) {
    spec.gpu_numa.push_back(g.numa);
    spec.gpu_nvlink.push_back(g.nvlink_domain);
    std::vector<std::string>& mig = spec.gpu_mig.emplace_back();
    for (const api::MigDeviceInventory& d : g.mig) mig.push_back(d.profile);
  }
  spec.nvlink_group = inv.nvlink_group;
  spec.leaf = inv.leaf;
  spec.spine = inv.spine;
  spec.sharing = {};
  for (const std::string& mode : inv.gpu_sharing) {
    if (const Result<model::GpuSharing> parsed = model::ParseGpuSharing(mode); parsed.ok()) spec.sharing.Add(*parsed);
  }
  return spec;
}

}  // namespace tessera::controlplane
