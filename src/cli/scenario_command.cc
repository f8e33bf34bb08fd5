// tessera scenario FILE...: replays scenario files and says which expectations failed.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "simkit/scenario.h"

namespace tessera::cli {

void AddScenarioCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("scenario", "Replay scenario files (tests/scenarios/*.yaml) and check their expectations");
  auto files = std::make_shared<std::vector<std::string>>();
  auto verbose = std::make_shared<bool>(false);
  cmd->add_option("files", *files, "scenario files")->required()->check(CLI::ExistingFile);
  cmd->add_flag("-v,--verbose", *verbose, "print what happened in every cycle");
  cmd->callback([files, verbose] {
    int failed = 0;
    for (const std::string& file : *files) {
      const auto report = simkit::RunScenarioFile(file);
      if (!report.ok()) {
        std::fprintf(stderr, "error: %s\n", report.status().message().c_str());
        throw CLI::RuntimeError(kExitBadInput);
      }
      const bool ok = report->failures.empty();
      failed += ok ? 0 : 1;
      std::printf("%-4s %s (%d cycles, %d checks)\n", ok ? "ok" : "FAIL", report->name.c_str(), report->cycles, report->checks);
      for (const std::string& f : report->failures) std::printf("     %s\n", f.c_str());
      if (*verbose || !ok) {
        for (const std::string& line : report->log) std::printf("       %s\n", line.c_str());
      }
    }
    std::printf("%zu passed, %d failed\n", files->size() - static_cast<std::size_t>(failed), failed);
    if (failed) throw CLI::RuntimeError(kExitFailure);
  });
}

}  // namespace tessera::cli
