// The job commands: submit (a file, or the quick form with the command after
// "--"), jobs, describe, cancel and logs. All go through the /v1 API.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "base/quantity.h"
#include "cli/api_client.h"
#include "cli/commands.h"
#include "cli/quick_job.h"
#include "cli/table.h"
#include "net/http_types.h"

namespace tessera::cli {
namespace {

using nlohmann::json;

struct SubmitArgs {
  ClientOptions client;
  std::vector<std::string> files;
  QuickJobArgs job;
};

void Submit(const SubmitArgs& a) {
  ApiClient api(a.client);
  struct Body {
    std::string text, type, source;
  };
  std::vector<Body> bodies;
  if (!a.job.command.empty()) {
    if (!a.files.empty()) Fail(kExitBadInput, "give either job files or a command after --, not both");
    bodies.push_back({QuickJob(a.job), "application/json", ""});
  } else {
    if (a.files.empty()) Fail(kExitBadInput, "nothing to submit: give a job file, or --gpus/--tasks and a command after --");
    for (const std::string& f : a.files) {
      bodies.push_back({ReadInputOrFail(f), f.ends_with(".json") ? "application/json" : "application/yaml", f == "-" ? "stdin" : f});
    }
  }
  json all = json::array();
  for (const Body& body : bodies) {
    const json answer = api.Call("POST", "/v1/jobs", body.text, body.type, body.source);
    for (const json& j : answer["jobs"]) all.push_back(j);
  }
  if (a.client.output == "json") return PrintJson({{"jobs", all}});
  for (const json& j : all) std::cout << "job " << j["id"].get<std::int64_t>() << " (" << j["name"].get<std::string>() << ") submitted\n";
}

// How the API names a job: its id, or an array element's "12[3]".
std::string JobRef(const json& job) {
  if (job.contains("arrayJobId")) {
    return std::to_string(job["arrayJobId"].get<std::int64_t>()) + "[" + std::to_string(job["arrayIndex"].get<int>()) + "]";
  }
  return std::to_string(job["id"].get<std::int64_t>());
}

// An array's elements by state, the states it has: "3 running, 10 pending, 87 succeeded".
std::string ArrayCounts(const json& array) {
  std::string text;
  for (const char* state : {"running", "pending", "succeeded", "failed", "cancelled"}) {
    if (const int n = array["counts"][state].get<int>(); n > 0) text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + state;
  }
  return text;
}

// "0-99%10": the array's indices and limit, as spec.array writes them.
std::string ArrayIndices(const json& array) {
  return array["indices"].get<std::string>() + (array.contains("limit") ? "%" + std::to_string(array["limit"].get<int>()) : "");
}

std::string Nodes(const json& job) {
  std::string nodes;
  for (const json& t : job["tasks"]) {
    const std::string n = t["node"];
    if (nodes.find(n) == std::string::npos) nodes += (nodes.empty() ? "" : ",") + n;
  }
  return nodes;
}

struct ListArgs {
  ClientOptions client;
  std::string state, queue, user;
  bool all = false;
  bool expand = false;
};

void ListJobs(const ListArgs& a) {
  ApiClient api(a.client);
  std::string target = "/v1/jobs?state=" + net::PercentEncode(a.state.empty() ? (a.all ? "" : "active") : a.state);
  if (!a.queue.empty()) target += "&queue=" + net::PercentEncode(a.queue);
  if (!a.user.empty()) target += "&user=" + net::PercentEncode(a.user);
  if (a.expand) target += "&expand=true";
  const json answer = api.Call("GET", target);
  if (a.client.output == "json") return PrintJson(answer);
  Table table({"ID", "NAME", "QUEUE", "USER", "STATE", "GPUS", "TASKS", "AGE", "NODES/REASON"});
  for (const json& j : answer["jobs"]) {
    const std::string state = j["state"];
    // An array is one line: its indices and how many elements are in each state.
    std::string where = j.contains("array")                        ? ArrayIndices(j["array"]) + ": " + ArrayCounts(j["array"])
                        : state == "pending" || j["tasks"].empty() ? j["message"].get<std::string>()
                                                                   : Nodes(j);
    if (where.size() > 60) where = where.substr(0, 57) + "...";
    table.Add({JobRef(j), j["name"], j["queue"], j["user"], state,
               FormatGpus(j["gpus"].get<double>()), std::to_string(j["taskCount"].get<int>()),
               AgeOf(j["submitTime"].get<std::int64_t>()), where});
  }
  table.Print();
}

struct JobArgs {
  ClientOptions client;
  std::vector<std::string> ids;
};

// The elements of an array that started (or were cancelled), one line each.
void DescribeElements(ApiClient& api, std::int64_t array) {
  const json elements = api.Call("GET", "/v1/jobs?array=" + std::to_string(array));
  if (elements["jobs"].empty()) return;
  std::cout << "\nElements started (or cancelled):\n";
  Table table({"ELEMENT", "ID", "STATE", "RUN", "NODES/REASON", "EXIT"});
  for (const json& e : elements["jobs"]) {
    std::string exit = "-";
    for (const json& t : e["tasks"]) {
      if (t.contains("exitCode")) exit = std::to_string(t["exitCode"].get<int>());
    }
    const std::string state = e["state"];
    std::string where = state == "pending" || e["tasks"].empty() ? e["message"].get<std::string>() : Nodes(e);
    if (where.size() > 60) where = where.substr(0, 57) + "...";
    table.Add({JobRef(e), std::to_string(e["id"].get<std::int64_t>()), state, std::to_string(e["attempt"].get<int>()), where, exit});
  }
  table.Print();
}

void Describe(const JobArgs& a) {
  ApiClient api(a.client);
  for (const std::string& id : a.ids) {
    const json j = api.Call("GET", "/v1/jobs/" + net::PercentEncode(id));
    if (a.client.output == "json") {
      PrintJson(j);
      continue;
    }
    std::cout << "Job:        " << JobRef(j) << " (" << j["name"].get<std::string>() << ")"
              << (j.contains("arrayJobId") ? "   id " + std::to_string(j["id"].get<std::int64_t>()) : "") << "\n"
              << "Queue:      " << j["queue"].get<std::string>() << "   User: " << j["user"].get<std::string>()
              << "   Priority: " << j["priority"].get<int>() << (j["preemptible"].get<bool>() ? "   preemptible" : "") << "\n"
              << "State:      " << j["state"].get<std::string>() << "   Run: " << j["attempt"].get<int>()
              << "   Restarts: " << j["restarts"].get<int>() << "/" << j["maxRestarts"].get<int>() << "\n";
    if (!j["message"].get<std::string>().empty()) std::cout << "Message:    " << j["message"].get<std::string>() << "\n";
    if (j.contains("parameters")) {
      std::string parameters;
      for (const auto& [name, value] : j["parameters"].items()) parameters += (parameters.empty() ? "" : " ") + name + "=" + value.get<std::string>();
      std::cout << "Parameters: " << parameters << "\n";
    }
    if (j.contains("array")) {
      const json& array = j["array"];
      std::cout << "Array:      " << ArrayIndices(array) << " (" << array["size"].get<int>() << " elements"
                << (array.contains("limit") ? ", at most " + std::to_string(array["limit"].get<int>()) + " at a time" : "") << ")\n"
                << "Elements:   " << ArrayCounts(array) << "\n";
    }
    std::cout << "GPUs:       " << FormatGpus(j["gpus"].get<double>()) << " in " << j["taskCount"].get<int>() << " tasks\n";
    if (j.value("proportionalGpuMemory", false)) {
      std::cout << "GPU memory: a fraction's share of the GPU it lands on (no gpuMemory asked: 0.5 of an 80Gi GPU holds 40Gi)\n";
    }
    if (const double held = j.value("gpuSeconds", 0.0); held > 0) {
      const double idle = j.value("idleGpuSeconds", 0.0);
      std::cout << "GPU time:   " << FormatGpus(held / 3600.0) << " GPU-hours, " << FormatGpus(100.0 * idle / held)
                << "% of it idle\n";
    }
    if (const double lost = j.value("lostGpuSeconds", 0.0); lost > 0) {
      std::cout << "Lost work:  " << FormatGpus(lost / 3600.0) << " GPU-hours, runs stopped past their last checkpoint\n";
    }
    if (j.contains("lastCheckpointTime")) std::cout << "Checkpoint: " << AgeOf(j["lastCheckpointTime"].get<std::int64_t>()) << " ago\n";
    if (j.contains("masterPort")) std::cout << "Rendezvous: MASTER_PORT " << j["masterPort"].get<int>() << " on rank 0's node\n";
    if (j.contains("array")) DescribeElements(api, j["id"].get<std::int64_t>());
    if (!j["tasks"].empty()) {
      std::cout << "\nTasks (run " << j["attempt"].get<int>() << "):\n";
      Table tasks({"TASK", "NODE", "GPUS", "STATE", "EXIT"});
      for (const json& t : j["tasks"]) {
        std::string gpus;
        for (const json& g : t["gpus"]) gpus += (gpus.empty() ? "" : ",") + std::to_string(g.get<int>());
        if (t.contains("migDevice")) {
          gpus += " (MIG " + t["migDevice"].get<std::string>() + ")";
        } else if (const int milli = t["gpuMilli"].get<int>(); milli > 0 && milli < 1000) {
          gpus += " (" + FormatGpus(milli / 1000.0) + " GPU, " + FormatBytes(t["gpuMemory"].get<std::int64_t>()) + ")";
        }
        tasks.Add({t["name"], t["node"], gpus.empty() ? "-" : gpus, t["state"],
                   t.contains("exitCode") ? std::to_string(t["exitCode"].get<int>()) : "-"});
      }
      tasks.Print();
    }
    std::cout << "\nEvents:\n";
    Table events({"REVISION", "AGE", "TYPE", "MESSAGE"});
    for (const json& e : j["events"]) {
      events.Add({std::to_string(e["revision"].get<std::int64_t>()), AgeOf(e["time"].get<std::int64_t>()), e["type"], e["message"]});
    }
    events.Print();
    std::cout << "\nSpec:\n" << j["spec"].get<std::string>() << "\n";
  }
}

// A checkpoint written now by each job's current run (docs/fault-tolerance.md).
void ReportCheckpoint(const JobArgs& a) {
  ApiClient api(a.client);
  for (const std::string& id : a.ids) {
    const json j = api.Call("POST", "/v1/jobs/" + net::PercentEncode(id) + "/checkpoint");
    if (a.client.output == "json") {
      PrintJson(j);
    } else {
      std::cout << "job " << id << ": checkpoint recorded; preemption and drains count its work as safe up to now\n";
    }
  }
}

void Cancel(const JobArgs& a) {
  ApiClient api(a.client);
  for (const std::string& id : a.ids) {
    const json j = api.Call("DELETE", "/v1/jobs/" + net::PercentEncode(id));
    if (a.client.output == "json") {
      PrintJson(j);
    } else {
      std::cout << "job " << id << " (" << j["name"].get<std::string>() << ") cancelled"
                << (j.contains("array") ? " with its elements: " + ArrayCounts(j["array"]) : "") << "\n";
    }
  }
}

struct LogArgs {
  ClientOptions client;
  std::string id, task;
  bool stderr_stream = false;
  bool follow = false;
  int attempt = 0;
};

void Logs(const LogArgs& a) {
  ApiClient api(a.client);
  std::int64_t offset = 0;
  int empty_reads_after_end = 0;  // the last chunks may arrive just after the job ends
  for (;;) {
    std::string target = "/v1/jobs/" + net::PercentEncode(a.id) + "/logs?stream=" + (a.stderr_stream ? "stderr" : "stdout") +
                         "&offset=" + std::to_string(offset);
    if (!a.task.empty()) target += "&task=" + net::PercentEncode(a.task);
    if (a.attempt > 0) target += "&attempt=" + std::to_string(a.attempt);
    const net::HttpResponse r = api.Raw("GET", target);
    if (r.status != 200) {
      const json e = json::parse(r.body, nullptr, false);
      const std::string message = !e.is_discarded() && e.contains("error") ? e["error"].get<std::string>() : r.body;
      // Following a job that has not started yet: wait for it.
      if (a.follow && r.status == 404 && message.find("has not started yet") != std::string::npos) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        continue;
      }
      Fail(ExitCodeOf(r.status), message);
    }
    std::cout << r.body << std::flush;
    offset += static_cast<std::int64_t>(r.body.size());
    if (!a.follow) {
      if (r.body.empty()) return;
      continue;  // more than one chunk: read to the end
    }
    if (r.body.empty()) {
      // Logs reach the server within a heartbeat of the task writing them.
      const json job = api.Call("GET", "/v1/jobs/" + net::PercentEncode(a.id));
      const std::string state = job["state"];
      if (state != "pending" && state != "starting" && state != "running" && ++empty_reads_after_end > 3) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }
}

}  // namespace

std::vector<std::string>& CommandAfterDashes() {
  static std::vector<std::string> command;
  return command;
}

void AddJobCommands(CLI::App& app) {
  {
    auto args = std::make_shared<SubmitArgs>();
    CLI::App* cmd = app.add_subcommand("submit", "Submit jobs: job files (YAML or JSON), or the quick form: --gpus 2 --tasks 4 -- python train.py");
    AddClientFlags(cmd, &args->client);
    cmd->add_option("files", args->files, "Job files; - reads stdin");
    AddQuickJobFlags(cmd, &args->job);
    cmd->footer("Everything after -- is the command each task runs (quick form).");
    cmd->callback([args] {
      args->job.command = CommandAfterDashes();
      Submit(*args);
    });
  }
  {
    auto args = std::make_shared<ListArgs>();
    CLI::App* cmd = app.add_subcommand("jobs", "List jobs (active ones unless --all or --state)");
    AddClientFlags(cmd, &args->client);
    cmd->add_option("--state", args->state, "pending, starting, running, succeeded, failed, cancelled, active, ended");
    cmd->add_option("-q,--queue", args->queue, "Only this queue and the queues below it");
    cmd->add_option("-u,--user", args->user, "Only this user's jobs");
    cmd->add_flag("-a,--all", args->all, "Include ended jobs");
    cmd->add_flag("-x,--expand", args->expand, "List each array's started elements under it (ID[INDEX])");
    cmd->callback([args] { ListJobs(*args); });
  }
  {
    auto args = std::make_shared<JobArgs>();
    CLI::App* cmd = app.add_subcommand("describe", "Show a job: tasks, placement, events, spec");
    AddClientFlags(cmd, &args->client);
    cmd->add_option("jobs", args->ids, "Job ids; an array element as ID[INDEX]")->required();
    cmd->callback([args] { Describe(*args); });
  }
  {
    auto args = std::make_shared<JobArgs>();
    CLI::App* cmd = app.add_subcommand("cancel", "Cancel jobs: their tasks get SIGTERM, then SIGKILL after the grace period");
    AddClientFlags(cmd, &args->client);
    cmd->add_option("jobs", args->ids, "Job ids; an array cancels with its elements, ID[INDEX] one element")->required();
    cmd->callback([args] { Cancel(*args); });
  }
  {
    auto args = std::make_shared<JobArgs>();
    CLI::App* cmd = app.add_subcommand("checkpoint", "Report that running jobs just wrote a checkpoint (as touching TESSERA_CHECKPOINT_FILE does)");
    AddClientFlags(cmd, &args->client);
    cmd->add_option("jobs", args->ids, "Job ids; an array element as ID[INDEX]")->required();
    cmd->callback([args] { ReportCheckpoint(*args); });
  }
  {
    auto args = std::make_shared<LogArgs>();
    CLI::App* cmd = app.add_subcommand("logs", "Print a task's output (the first task unless --task)");
    AddClientFlags(cmd, &args->client);
    cmd->add_option("job", args->id, "Job id; an array element as ID[INDEX]")->required();
    cmd->add_option("-t,--task", args->task, "Task name, e.g. worker-1");
    cmd->add_flag("--stderr", args->stderr_stream, "Standard error instead of standard output");
    cmd->add_flag("-f,--follow", args->follow, "Keep printing until the job ends");
    cmd->add_option("--attempt", args->attempt, "An earlier run of a restarted job");
    cmd->callback([args] { Logs(*args); });
  }
}

}  // namespace tessera::cli
