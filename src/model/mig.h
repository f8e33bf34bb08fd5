// MIG (Multi-Instance GPU): the hardware splits a GPU into isolated devices,
// each with its own compute slices and memory. A MIG device is named by its
// profile as nvidia-smi and NVIDIA's device plugin name it:
//   1g.10gb      one GPU slice (of seven) with 10 GB of memory
//   1c.2g.20gb   one compute slice of a two-slice GPU instance
//   1g.10gb+me   with the media engines
// A task asks for one device of a profile (`resources: {mig: 1g.10gb}`); the
// scheduler places it on a free device of exactly that profile. It never
// partitions a GPU itself: the devices are those the node's agent found
// (docs/gpu-sharing.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tessera::model {

struct MigProfile {
  std::string name;  // as written: "1g.10gb"
  std::int32_t compute_slices = 0;
  std::int32_t gpu_slices = 0;
  std::int64_t memory = 0;  // bytes (the profile's "10gb" as GiB, as NVIDIA rounds them)

  // The share of one GPU the device counts as in quotas, fair share and
  // accounting: its compute slices of the seven of an A100, H100 or H200.
  // Always below a whole GPU, so a MIG task is a fraction everywhere.
  std::int32_t milli() const;
};

// "1g.10gb", "1c.2g.20gb" or either with "+attributes"; anything else is an
// error that shows the expected form.
Result<MigProfile> ParseMigProfile(std::string_view name);

}  // namespace tessera::model
