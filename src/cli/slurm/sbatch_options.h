// sbatch's options, from a script's #SBATCH lines and from the command line,
// into one SbatchOptions. As sbatch reads them:
//   * directives are the "#SBATCH" lines at the top of the script, before its
//     first command line (blank lines and other comments may come between);
//     a "#SBATCH" after the first command is a comment, and "# SBATCH" is
//     always one. A directive line may hold several options and a trailing
//     "# comment"; values may be quoted.
//   * the command line wins: its options are applied after the directives.
//     Its first positional word is the script, the rest are the script's
//     arguments.
//   * "-N 2", "-N2", "--nodes 2" and "--nodes=2" are one option.
// Every value is checked where it is read, and every error names where the
// option came from ("train.sh:7: --gres=gpu:x: ..." or "command line: ...").
// An option Tessera cannot honour (a Slurm option with no meaning here, or
// none Slurm knows) is an error unless `ignore_unknown`, which makes it a
// warning. The table of options and how each maps is docs/slurm.md's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tessera::cli::slurm {

// One word of input and where it came from ("train.sh:7", "command line").
struct Word {
  std::string text;
  std::string where;
};

// GPUs as --gpus, --gpus-per-node, --gpus-per-task and --gres write them:
// an optional type (a GPU model, "a100") and a count.
struct GpuCount {
  std::string type;
  std::int32_t count = 0;
};

struct SbatchDependency {
  enum class Kind { kAfterOk, kAfterAny, kAfterNotOk };
  Kind kind = Kind::kAfterOk;
  std::int64_t job_id = 0;
};

// --signal=[B:]SIG[@SECS]
struct SignalSpec {
  std::string name;     // "SIGUSR1"
  std::int32_t seconds = 60;  // Slurm's default: 60 s before the end
  bool batch_only = false;    // "B:": the batch shell alone (in Tessera the whole task's process group)
};

struct SbatchOptions {
  std::optional<std::int32_t> nodes, ntasks, ntasks_per_node, cpus_per_task, cpus_per_gpu;
  std::optional<GpuCount> gres;  // per node
  std::optional<GpuCount> gpus;  // in the whole job
  std::optional<GpuCount> gpus_per_node, gpus_per_task;
  std::optional<std::int64_t> mem;  // bytes per node; 0: all of the node's (no request)
  std::optional<std::int64_t> mem_per_gpu, mem_per_cpu;  // bytes
  std::optional<std::int64_t> time_limit;  // seconds; 0: unlimited
  std::string partition, account, qos, job_name, output, error, chdir, wrap, open_mode;
  std::string array;  // -a/--array as written ("0-99%10"), checked (model/job_array.h)
  std::optional<std::string> export_spec;  // ALL, NONE, or [ALL,]NAME[=VALUE],...
  std::vector<SbatchDependency> dependencies;
  bool dependency_any = false;  // '?' separated: any one satisfied (refused when it matters)
  bool singleton = false;
  bool exclusive = false;
  std::string constraint;  // as written: "a100", "a100|h100", "h100&ib"
  std::optional<bool> requeue;
  std::optional<SignalSpec> signal;
  // Where each option (its long name) was last set, for errors found later.
  std::map<std::string, std::string> origin;
  // Tessera's own flags, command line only: ignore-unknown, dry-run, json,
  // parsable, server, token-file, ca-file, cert-file, key-file.
  std::map<std::string, std::string> tessera;
};

// The words of the directives of a script: every option of every #SBATCH
// line before the first command, each with "FILE:LINE". An unterminated
// quote is an error naming its line.
Result<std::vector<Word>> ScanDirectives(std::string_view script, const std::string& file);

struct Parsed {
  std::vector<std::string> positionals;  // command line: the script and its arguments
  std::vector<std::string> warnings;     // options ignored under --ignore-unknown
};

// Applies options to `options` in order (later wins). From a script,
// positional words are errors; from the command line, the first positional
// and everything after it are returned. Tessera's own flags are accepted
// only when `command_line`.
Result<Parsed> ApplyOptions(const std::vector<Word>& words, bool command_line, bool ignore_unknown, SbatchOptions* options);

// Whether the command line asks for --ignore-unknown (read before the
// directives, which it governs too).
bool WantsIgnoreUnknown(const std::vector<std::string>& argv);

// One option word split getopt-style: "--nodes=2" -> {"nodes", 0, "2"},
// "-N2" and "-N=2" -> {"", 'N', "2"}, "--exclusive" -> {"exclusive", 0, none}.
struct OptionWord {
  std::string name;
  char short_name = 0;
  std::optional<std::string> value;
};
OptionWord SplitOptionWord(const std::string& word);

// Slurm sizes: a number with K, M, G or T (powers of 1024), megabytes when bare.
Result<std::int64_t> ParseSlurmSize(std::string_view text);

}  // namespace tessera::cli::slurm
