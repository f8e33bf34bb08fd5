// tessera: the one binary. The control plane (server, agent, up), the user's
// commands (submit, jobs, describe, cancel, logs, nodes, queues, top), the
// simulator, the scenario runner, the benchmarks and the scheduling demo.
#include <CLI/CLI.hpp>

#include <string_view>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Tessera: a GPU cluster orchestrator"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tessera 0.1.0");
  tessera::cli::AddDemoCommand(app);
  tessera::cli::AddScenarioCommand(app);
  tessera::cli::AddBenchCommand(app);
  tessera::cli::AddSimCommand(app);
  tessera::cli::AddServerCommands(app);
  tessera::cli::AddJobCommands(app);
  tessera::cli::AddClusterCommands(app);
  tessera::cli::AddAccessCommands(app);
  tessera::cli::AddHistoryCommand(app);
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") {
      tessera::cli::CommandAfterDashes().assign(argv + i + 1, argv + argc);
      argc = i;
      break;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command's own documented exit code
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? tessera::cli::kExitOk : tessera::cli::kExitBadInput;
  }
  return tessera::cli::kExitOk;
}
