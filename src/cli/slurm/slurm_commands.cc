// The Slurm commands of the `tessera` program: `sbatch` (a batch script into
// a Job, submitted through the API), and the two the job's tasks run,
// hidden from the help: `slurm-step` (step_runner.h) and `srun` (srun.h).
#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/api_client.h"
#include "cli/commands.h"
#include "cli/slurm/sbatch_job.h"
#include "cli/slurm/sbatch_options.h"
#include "cli/slurm/slurm_env.h"
#include "cli/slurm/srun.h"
#include "cli/slurm/step_runner.h"
#include "net/http_types.h"

namespace tessera::cli {
namespace {

using nlohmann::json;
namespace slurm = tessera::cli::slurm;

// The words CLI11 left over, and what followed "--" (main.cc sets that apart).
std::vector<std::string> Arguments(CLI::App* cmd) {
  std::vector<std::string> args = cmd->remaining();
  if (!CommandAfterDashes().empty()) {
    args.push_back("--");
    args.insert(args.end(), CommandAfterDashes().begin(), CommandAfterDashes().end());
  }
  return args;
}

std::string UserName() {
  if (const char* user = std::getenv("USER"); user && *user) return user;
  const passwd* pw = getpwuid(getuid());
  return pw ? pw->pw_name : std::to_string(getuid());
}

ClientOptions ClientFrom(const slurm::SbatchOptions& o) {
  ClientOptions client;
  CLI::App defaults;  // the environment's defaults, as every client command reads them
  AddClientFlags(&defaults, &client);
  const auto set = [&](const char* name, std::string* field) {
    if (const auto it = o.tessera.find(name); it != o.tessera.end()) *field = it->second;
  };
  set("server", &client.server);
  set("token-file", &client.token_file);
  set("ca-file", &client.tls.ca_file);
  set("cert-file", &client.tls.cert_file);
  set("key-file", &client.tls.key_file);
  return client;
}

// The GPUs of the largest node, for --exclusive.
std::int32_t LargestNodeGpus(ApiClient& api) {
  const json answer = api.Call("GET", "/v1/nodes");
  std::int32_t most = 0;
  for (const json& node : answer.value("nodes", json::array())) {
    const json& gpus = node.contains("gpus") ? node["gpus"] : json();
    const std::int32_t count = gpus.is_array() ? static_cast<std::int32_t>(gpus.size()) : gpus.is_number() ? gpus.get<std::int32_t>() : 0;
    most = std::max(most, count);
  }
  return most;
}

void Sbatch(CLI::App* cmd) {
  const std::vector<std::string> argv = Arguments(cmd);
  const bool ignore = slurm::WantsIgnoreUnknown(argv);
  std::vector<slurm::Word> line;
  for (const std::string& a : argv) line.push_back({a, "command line"});
  // The command line first, for the script's name; applied again after the
  // directives, since it wins.
  slurm::SbatchOptions first;
  Result<slurm::Parsed> from_line = slurm::ApplyOptions(line, true, ignore, &first);
  if (!from_line.ok()) Fail(kExitBadInput, from_line.status().message());
  std::vector<std::string> positionals = from_line->positionals;
  slurm::SubmitContext context;
  std::string file;
  if (!first.wrap.empty()) {
    if (!positionals.empty()) Fail(kExitBadInput, "--wrap takes no script; give one or the other");
    context.script = slurm::WrapScript(first.wrap);
  } else {
    if (positionals.empty()) Fail(kExitBadInput, "give a batch script, or a command with --wrap \"CMD\"");
    file = positionals.front();
    context.script = ReadInputOrFail(file, "the batch script");
    context.script_name = file == "-" ? "sbatch" : file;
    context.args.assign(positionals.begin() + 1, positionals.end());
    if (context.script.rfind("#!", 0) != 0) {
      Fail(kExitBadInput, (file == "-" ? std::string("stdin") : file) +
                              ":1: the first line must be #! and an interpreter (#!/bin/bash), as sbatch requires");
    }
  }
  slurm::SbatchOptions options;
  Result<std::vector<slurm::Word>> directives = slurm::ScanDirectives(context.script, file.empty() ? "wrap" : file);
  if (!directives.ok()) Fail(kExitBadInput, directives.status().message());
  Result<slurm::Parsed> from_script = slurm::ApplyOptions(*directives, false, ignore, &options);
  if (!from_script.ok()) Fail(kExitBadInput, from_script.status().message());
  from_line = slurm::ApplyOptions(line, true, ignore, &options);
  for (const std::string& w : from_script->warnings) std::cerr << "tessera sbatch: warning: " << w << "\n";
  for (const std::string& w : from_line->warnings) std::cerr << "tessera sbatch: warning: " << w << "\n";

  const ClientOptions client = ClientFrom(options);
  std::unique_ptr<ApiClient> api;
  const auto server = [&]() -> ApiClient& {
    if (!api) api = std::make_unique<ApiClient>(client);
    return *api;
  };
  context.submit_dir = std::filesystem::current_path().string();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  context.submit_host = host;
  context.user = UserName();
  std::error_code ec;
  context.tessera_binary = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  context.environment = slurm::CurrentEnvironment();
  context.job_exists = [&](std::int64_t id) -> Status {
    const net::HttpResponse r = server().Raw("GET", "/v1/jobs/" + std::to_string(id));
    if (r.status == 404) return NotFound("job " + std::to_string(id) + " does not exist");
    if (r.status != 200) return Internal("cannot look up job " + std::to_string(id) + ": HTTP " + std::to_string(r.status));
    return {};
  };
  if (options.exclusive) context.node_gpus = LargestNodeGpus(server());
  Result<json> job = slurm::TranslateToJob(options, context);
  if (!job.ok()) Fail(kExitBadInput, job.status().message());
  if (options.tessera.contains("dry-run")) {
    std::cout << job->dump(2) << "\n";
    return;
  }
  const json answer = server().Call("POST", "/v1/jobs", job->dump(), "application/json", file.empty() ? "wrap" : file);
  const std::int64_t id = answer["jobs"][0]["id"].get<std::int64_t>();
  if (options.tessera.contains("json")) return PrintJson(answer);
  if (options.tessera.contains("parsable")) {
    std::cout << id << "\n";
    return;
  }
  std::cout << "Submitted batch job " << id << "\n";
}

}  // namespace

void AddSlurmCommands(CLI::App& app) {
  CLI::App* sbatch = app.add_subcommand("sbatch", "Submit a Slurm batch script (#SBATCH directives) as a Tessera job (docs/slurm.md)");
  sbatch->prefix_command();
  sbatch->footer(
      "tessera sbatch [sbatch options] script.sh [args] | --wrap \"CMD\"\n"
      "Tessera's own flags: --dry-run (print the Job), --json, --parsable, --ignore-unknown (warn on options Tessera cannot "
      "honour), --server, --token-file, --ca-file, --cert-file, --key-file.");
  sbatch->callback([sbatch] { Sbatch(sbatch); });

  CLI::App* step = app.add_subcommand("slurm-step", "The task command of a job tessera sbatch submitted");
  step->group("");  // hidden: the agent runs it
  step->callback([] { throw CLI::RuntimeError(slurm::RunSlurmStep()); });

  CLI::App* srun = app.add_subcommand("srun", "Launch a step's tasks across a batch job's nodes (inside tessera sbatch jobs)");
  srun->group("");
  srun->prefix_command();
  srun->set_help_flag();
  srun->callback([srun] { throw CLI::RuntimeError(slurm::RunSrun(Arguments(srun))); });
}

}  // namespace tessera::cli
