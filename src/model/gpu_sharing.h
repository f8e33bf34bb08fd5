// How tasks that hold fractions of one GPU share it (docs/gpu-sharing.md):
//   vgpu       the node enforces each task's memory cap and compute share
//              (libtessera-vgpu.so, preloaded into the task);
//   mps        NVIDIA's Multi-Process Service enforces them, where the node has it;
//   timeslice  no caps at all, as the device plugin's time-slicing; only for
//              jobs that ask for it;
//   mig        a MIG device of the GPU, isolated by the hardware (model/mig.h).
//              It is not a mode a node or a job chooses: a GPU in MIG mode
//              shares only this way, and a task asks with resources.mig.
// A node offers a set of modes to fractions (none: its GPUs are exclusive).
// A GPU takes the mode of its first fractional tenant and then admits only
// tasks that share it the same way, until it is empty again.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace tessera::model {

enum class GpuSharing : std::uint8_t { kVgpu, kMps, kTimeSlice, kMig };

// A set of modes, one bit per mode.
class GpuSharingSet {
 public:
  constexpr GpuSharingSet() = default;
  static constexpr GpuSharingSet Of(std::initializer_list<GpuSharing> modes) {
    GpuSharingSet set;
    for (GpuSharing m : modes) set.bits_ |= Bit(m);
    return set;
  }
  constexpr bool Has(GpuSharing mode) const { return (bits_ & Bit(mode)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr void Add(GpuSharing mode) { bits_ |= Bit(mode); }
  constexpr void Remove(GpuSharing mode) { bits_ &= static_cast<std::uint8_t>(~Bit(mode)); }
  constexpr bool operator==(const GpuSharingSet&) const = default;

 private:
  static constexpr std::uint8_t Bit(GpuSharing mode) { return static_cast<std::uint8_t>(1U << static_cast<int>(mode)); }
  std::uint8_t bits_ = 0;
};

// What a node offers when its configuration says nothing: vGPU and time-slicing
// (MPS only where the agent finds the MPS control daemon).
inline constexpr GpuSharingSet kDefaultGpuSharing = GpuSharingSet::Of({GpuSharing::kVgpu, GpuSharing::kTimeSlice});
// The modes a node offers and a job chooses (kMig is neither: see above).
inline constexpr GpuSharing kAllGpuSharing[] = {GpuSharing::kVgpu, GpuSharing::kMps, GpuSharing::kTimeSlice};

std::string_view ToString(GpuSharing mode);
Result<GpuSharing> ParseGpuSharing(std::string_view name);  // "vgpu", "mps", "timeslice"
// "vgpu, timeslice", or "exclusive" for the empty set.
std::string ToString(GpuSharingSet set);
// A list of mode names, or the single word "exclusive" (no sharing at all).
Result<GpuSharingSet> ParseGpuSharingList(std::string_view comma_separated);

}  // namespace tessera::model
