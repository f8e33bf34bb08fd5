// The sub-commands of the `tessera` program. Each Add* function registers one
// command (its flags and its action) with the CLI11 application; main.cc wires
// them together. Commands are thin: parse flags, call the libraries, print.
#pragma once

#include <CLI/CLI.hpp>

namespace tessera::cli {

void AddDemoCommand(CLI::App& app);
void AddScenarioCommand(CLI::App& app);
void AddBenchCommand(CLI::App& app);
void AddSimCommand(CLI::App& app);
void AddServerCommands(CLI::App& app);   // server, agent, up
void AddJobCommands(CLI::App& app);      // submit, jobs, describe, cancel, logs
void AddClusterCommands(CLI::App& app);  // nodes, queues, top
void AddHistoryCommand(CLI::App& app);
void AddWhatIfCommand(CLI::App& app);    // whatif: the server's record replayed under a proposed configuration
void AddAccessCommands(CLI::App& app);   // tokens, audit, certs
void AddSessionCommands(CLI::App& app); // exec, attach, port-forward, run -it
void AddSlurmCommands(CLI::App& app);    // sbatch, and the hidden slurm-step and srun (docs/slurm.md)
// `tessera submit ... -- CMD ARGS`: main() moves what follows "--" here
// before parsing, since CLI11 would take it for more job files.
std::vector<std::string>& CommandAfterDashes();

// Exit codes shared by all commands (documented in README.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;     // the command ran and found a problem
inline constexpr int kExitBadInput = 2;    // malformed arguments or input files; the server refused the input
inline constexpr int kExitUnreachable = 3; // no answer from the server
inline constexpr int kExitNotFound = 4;    // the job, node or queue does not exist
inline constexpr int kExitDenied = 5;      // no valid token (401), not allowed (403), or over a limit (429)

}  // namespace tessera::cli
