// Slurm's time limit formats (sbatch --time), read into seconds:
//   MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS
// ("-t 30" is thirty minutes, "-t 1-12" a day and a half). "UNLIMITED" and
// "INFINITE" mean no limit and read as 0 (Tessera's "no walltime given").
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace tessera::cli::slurm {

Result<std::int64_t> ParseSlurmTime(std::string_view text);

}  // namespace tessera::cli::slurm
