// tessera: the one binary. The control plane (server, agent, up), the user's
// commands (submit, jobs, describe, cancel, logs, nodes, queues, top), the
// simulator, the scenario runner, the benchmarks and the scheduling demo.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"

namespace {

// Edits (insert, delete, replace) between two words: how near a mistyped command is.
std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<const CLI::App*> Commands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

bool KnownCommand(const CLI::App& app, std::string_view word) {
  const std::vector<const CLI::App*> commands = Commands(app);
  return std::any_of(commands.begin(), commands.end(), [&](const CLI::App* c) { return c->check_name(std::string(word)); });
}

// "unknown command 'job'; did you mean 'jobs'?": the nearest command, when one is near.
std::string UnknownCommand(const CLI::App& app, std::string_view word) {
  std::string nearest;
  std::size_t best = word.size() / 3 + 1;  // this far or farther is no suggestion
  for (const CLI::App* command : Commands(app)) {
    const std::size_t d = EditDistance(word, command->get_name());
    if (d < best) best = d, nearest = command->get_name();
  }
  std::string message = "tessera: unknown command '" + std::string(word) + "'";
  message += nearest.empty() ? "" : "; did you mean '" + nearest + "'?";
  return message + " (tessera --help lists the commands)";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Tessera: a GPU cluster orchestrator", "tessera"};
  // At most one command; none prints the help (below) rather than an error.
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", "tessera 0.1.0");
  tessera::cli::AddDemoCommand(app);
  tessera::cli::AddScenarioCommand(app);
  tessera::cli::AddBenchCommand(app);
  tessera::cli::AddSimCommand(app);
  tessera::cli::AddServerCommands(app);
  tessera::cli::AddJobCommands(app);
  tessera::cli::AddSessionCommands(app);
  tessera::cli::AddClusterCommands(app);
  tessera::cli::AddAccessCommands(app);
  tessera::cli::AddHistoryCommand(app);
  tessera::cli::AddWhatIfCommand(app);
  tessera::cli::AddSlurmCommands(app);
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") {
      tessera::cli::CommandAfterDashes().assign(argv + i + 1, argv + argc);
      argc = i;
      break;
    }
  }
  if (argc == 1) {
    std::fputs(app.help().c_str(), stdout);
    return tessera::cli::kExitBadInput;
  }
  if (const std::string_view first = argv[1]; !first.starts_with("-") && !KnownCommand(app, first)) {
    std::fprintf(stderr, "%s\n", UnknownCommand(app, first).c_str());
    return tessera::cli::kExitBadInput;
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
