// tessera: the one binary. Today: the demonstration of the scheduling core,
// the scenario runner, the simulator and the benchmarks; the control plane
// adds server, agent, up and the job commands.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Tessera: a GPU cluster orchestrator"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tessera 0.1.0");
  tessera::cli::AddDemoCommand(app);
  tessera::cli::AddScenarioCommand(app);
  tessera::cli::AddBenchCommand(app);
  tessera::cli::AddSimCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? tessera::cli::kExitOk : tessera::cli::kExitBadInput;
  }
  return tessera::cli::kExitOk;
}
