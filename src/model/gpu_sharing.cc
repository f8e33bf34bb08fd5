#include "model/gpu_sharing.h"

namespace tessera::model {

std::string_view ToString(GpuSharing mode) {
  switch (mode) {
    case GpuSharing::kVgpu: return "vgpu";
    case GpuSharing::kMps: return "mps";
    case GpuSharing::kTimeSlice: return "timeslice";
    case GpuSharing::kMig: return "mig";
  }
  return "?";
}

Result<GpuSharing> ParseGpuSharing(std::string_view name) {
  for (GpuSharing mode : kAllGpuSharing) {
    if (name == ToString(mode)) return mode;
  }
  return InvalidArgument("unknown GPU sharing mode '" + std::string(name) + "' (vgpu, mps or timeslice)");
}

std::string ToString(GpuSharingSet set) {
  std::string names;
  for (GpuSharing mode : kAllGpuSharing) {
    if (set.Has(mode)) names += (names.empty() ? "" : ", ") + std::string(ToString(mode));
  }
  return names.empty() ? "exclusive" : names;
}

Result<GpuSharingSet> ParseGpuSharingList(std::string_view text) {
  GpuSharingSet set;
  if (text == "exclusive") return set;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    std::string_view word = text.substr(0, comma);
    while (!word.empty() && word.front() == ' ') word.remove_prefix(1);
    while (!word.empty() && word.back() == ' ') word.remove_suffix(1);
    Result<GpuSharing> mode = ParseGpuSharing(word);
    if (!mode.ok()) return mode.status();
    set.Add(*mode);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
  return set;
}

}  // namespace tessera::model
