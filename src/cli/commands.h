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

// Exit codes shared by all commands (documented in README.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;     // the command ran and found a problem
inline constexpr int kExitBadInput = 2;    // malformed arguments or input files

}  // namespace tessera::cli
