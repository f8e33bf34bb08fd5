// Slurm's compressed hostlist form, as in SLURM_JOB_NODELIST: node names that
// differ only in a trailing number are folded into one bracketed range list,
// keeping zero padding: gpu-001,gpu-002,gpu-003,gpu-004,gpu-007 ->
// "gpu-[001-004,007]". Names keep their first-seen order by prefix group, and
// numbers within a group are sorted, as Slurm prints them; a name without a
// trailing number stays as it is. Numbers of different widths ("n9", "n10")
// fold into one list when neither is zero-padded.
#pragma once

#include <string>
#include <vector>

namespace tessera::cli::slurm {

std::string CompressHostlist(const std::vector<std::string>& names);
// The inverse, for tests (it trusts its input: a malformed range throws):
// "gpu-[001-003],cpu1" -> gpu-001, gpu-002, gpu-003, cpu1.
std::vector<std::string> ExpandHostlist(const std::string& list);

}  // namespace tessera::cli::slurm
