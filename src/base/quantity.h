// Parsing and printing of the quantities users write in YAML, in the forms
// Kubernetes and Slurm users already know:
//   memory   "80Gi", "512Mi", "1.5Ti", "40G", "1073741824"   -> bytes
//   cpu      "64", "0.5", "500m"                               -> millicores
//   gpus     "2", "0.25", "250m"                               -> milli-GPUs
//   duration "6h", "90m", "120s", "1h30m", "2d", "3600"        -> seconds
// Everything is fixed-point (integers), so sums never drift.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"

namespace tessera {

inline constexpr std::int64_t kMilli = 1000;  // one whole unit in milli-units
inline constexpr std::int64_t kGiB = std::int64_t{1} << 30;
inline constexpr std::int64_t kMiB = std::int64_t{1} << 20;

Result<std::int64_t> ParseBytes(std::string_view text);
Result<std::int64_t> ParseMilli(std::string_view text);  // cpus and gpus
Result<Seconds> ParseDuration(std::string_view text);

std::string FormatBytes(std::int64_t bytes);     // "80Gi", "1.5Gi", "512Mi"
std::string FormatMilli(std::int64_t milli);     // "8", "0.25"
std::string FormatDuration(Seconds seconds);     // "1h30m", "45s"

}  // namespace tessera
