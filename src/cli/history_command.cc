// `tessera history`: finished jobs and the GPU time they used, like Slurm's
// sacct; `--by queue|user` shows the server's GPU-hours and idle GPU-hours per
// queue or user (GET /v1/accounting), running jobs included.
#include <chrono>
#include <iomanip>
#include <map>
#include <sstream>

#include "base/quantity.h"
#include "cli/api_client.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "net/http_types.h"

namespace tessera::cli {
namespace {

using nlohmann::json;

struct HistoryArgs {
  ClientOptions client;
  std::string since = "24h", queue, user, by;
  std::size_t limit = 10'000;
};

std::string Hours(double gpu_seconds) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << gpu_seconds / 3600.0;
  return out.str();
}

std::string Percent(double part, double whole) {
  if (whole <= 0) return "-";
  std::ostringstream out;
  out << std::fixed << std::setprecision(0) << 100.0 * part / whole << "%";
  return out.str();
}

std::string Elapsed(const json& j) {
  const std::int64_t start = j["scheduledTime"].get<std::int64_t>();
  const std::int64_t end = j["endTime"].get<std::int64_t>();
  if (start == 0 || end < start) return "-";
  const std::int64_t s = (end - start) / 1000;
  std::ostringstream out;
  out << s / 3600 << ":" << std::setw(2) << std::setfill('0') << s / 60 % 60 << ":" << std::setw(2) << s % 60;
  return out.str();
}

void History(const HistoryArgs& a) {
  const Result<Seconds> since = ParseDuration(a.since);
  if (!since.ok()) Fail(kExitBadInput, "--since: " + since.status().message());
  if (!a.by.empty() && a.by != "queue" && a.by != "user") Fail(kExitBadInput, "--by: '" + a.by + "' is not queue or user");
  const std::int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string from_ms = std::to_string(std::max<std::int64_t>(0, now_ms - *since * 1000));
  std::string target = "/v1/jobs?state=ended&endedAfter=" + from_ms + "&limit=" + std::to_string(a.limit);
  if (!a.queue.empty()) target += "&queue=" + net::PercentEncode(a.queue);
  if (!a.user.empty()) target += "&user=" + net::PercentEncode(a.user);
  ApiClient api(a.client);
  if (a.by.empty()) {
    const json answer = api.Call("GET", target);
    if (a.client.output == "json") return PrintJson(answer);
    Table table({"ID", "NAME", "USER", "QUEUE", "STATE", "GPUS", "ELAPSED", "GPU-HOURS", "IDLE", "ENDED"});
    for (const json& j : answer["jobs"]) {
      const double held = j["gpuSeconds"].get<double>();
      table.Add({std::to_string(j["id"].get<std::int64_t>()), j["name"], j["user"], j["queue"], j["state"],
                 FormatGpus(j["gpus"].get<double>()), Elapsed(j), Hours(held), Percent(j["idleGpuSeconds"].get<double>(), held),
                 AgeOf(j["endTime"].get<std::int64_t>()) + " ago"});
    }
    return table.Print();
  }
  const json sums = api.Call("GET", "/v1/accounting?by=" + a.by + "&since=" + from_ms);
  if (a.client.output == "json") return PrintJson(sums);
  Table table({a.by == "queue" ? "QUEUE" : "USER", "JOBS", "GPU-HOURS", "IDLE-GPU-HOURS", "IDLE"});
  for (const json& row : sums["rows"]) {
    const double held = row["gpuHours"].get<double>() * 3600, idle = row["idleGpuHours"].get<double>() * 3600;
    table.Add({row[a.by].get<std::string>(), std::to_string(row["jobs"].get<std::int64_t>()), Hours(held), Hours(idle),
               Percent(idle, held)});
  }
  table.Print();
}

}  // namespace

void AddHistoryCommand(CLI::App& app) {
  auto args = std::make_shared<HistoryArgs>();
  CLI::App* cmd = app.add_subcommand("history", "Finished jobs and the GPU time they used (like sacct)");
  AddClientFlags(cmd, &args->client);
  cmd->add_option("--since", args->since, "How far back, by end time: 24h, 7d, 90m")->capture_default_str();
  cmd->add_option("-q,--queue", args->queue, "Only this queue and the queues below it");
  cmd->add_option("-u,--user", args->user, "Only this user's jobs");
  cmd->add_option("--by", args->by,
                  "GPU-hours per queue or per user of every job that ran in the period (running ones too), not a list");
  cmd->add_option("--limit", args->limit, "At most this many jobs")->capture_default_str();
  cmd->callback([args] { History(*args); });
}

}  // namespace tessera::cli
