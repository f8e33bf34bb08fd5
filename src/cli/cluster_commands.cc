// The cluster commands: nodes (list, cordon, uncordon, drain), queues (list,
// set, delete; registry logins) and top (the cluster at a glance, refreshed).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <map>
#include <thread>
#include <vector>

#include "cli/api_client.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "net/http_types.h"

namespace tessera::cli {
namespace {

using nlohmann::json;

void PrintNodes(const json& answer) {
  Table table({"NAME", "STATE", "GPUS", "ALLOCATED", "MODEL", "SHARING", "LEAF", "JOBS", "ADDRESS", "HEARTBEAT"});
  for (const json& n : answer["nodes"]) {
    const json& gpus = n["gpus"];
    // "8", or "8 (1 out)" while the agent holds GPUs out of service (docs/fault-tolerance.md).
    const auto out = std::count_if(gpus.begin(), gpus.end(), [](const json& g) { return g.contains("outOfService"); });
    const std::string gpu_count = std::to_string(gpus.size()) + (out > 0 ? " (" + std::to_string(out) + " out)" : "");
    std::string sharing;
    for (const json& mode : n.value("gpuSharing", json::array())) sharing += (sharing.empty() ? "" : ",") + mode.get<std::string>();
    table.Add({n["name"], n["state"], gpu_count, FormatGpus(n["allocatedGpus"].get<double>()),
               gpus.empty() ? "-" : gpus[0]["model"].get<std::string>(), sharing.empty() ? "exclusive" : sharing, n["leaf"],
               std::to_string(n["jobs"].get<std::int64_t>()), n["address"], AgeOf(n["lastHeartbeat"].get<std::int64_t>()) + " ago"});
  }
  table.Print();
}

void PrintQueues(const json& answer) {
  Table table({"QUEUE", "GUARANTEED", "LIMIT", "PER USER", "WEIGHT", "ALLOCATED", "RUNNING", "PENDING"});
  const auto optional = [](const json& gpus) { return gpus.is_null() ? std::string("-") : FormatGpus(gpus.get<double>()); };
  for (const json& q : answer["queues"]) {
    const double g = q["guaranteed"].get<double>();
    table.Add({q["name"], g > 1e12 ? "all" : FormatGpus(g), optional(q["limit"]), optional(q["userLimit"]), FormatGpus(q["weight"].get<double>()), FormatGpus(q["allocatedGpus"].get<double>()),
               std::to_string(q["runningJobs"].get<std::int64_t>()), std::to_string(q["pendingJobs"].get<std::int64_t>())});
  }
  table.Print();
}

void PrintLogins(const json& answer) {
  Table table({"QUEUE", "REGISTRY", "USERNAME", "SET BY", "UPDATED"});
  for (const json& l : answer["registryCredentials"]) {
    table.Add({l["queue"], l["registry"], l["username"], l["updatedBy"], AgeOf(l["updated"].get<std::int64_t>()) + " ago"});
  }
  table.Print();
}

struct LoginArgs {
  ClientOptions client;
  std::string queue, registry, username;
  bool password_stdin = false;
};

// `queues login`: the password comes from stdin only (its first line), as
// `docker login --password-stdin` takes it, so that it is in no shell
// history and no process listing.
void AddLoginCommands(CLI::App* queues) {
  auto login = std::make_shared<LoginArgs>();
  CLI::App* cmd = queues->add_subcommand("login", "Give a queue (and the queues below it) a login to an image registry");
  AddClientFlags(cmd, &login->client);
  cmd->add_option("queue", login->queue, "Queue path")->required();
  cmd->add_option("registry", login->registry, "Registry host[:port], as image references name it")->required();
  cmd->add_option("-u,--username", login->username, "Registry user")->required();
  cmd->add_flag("--password-stdin", login->password_stdin, "Read the password (or token) from stdin")->required();
  cmd->callback([login] {
    std::string password;
    std::getline(std::cin, password);
    if (!password.empty() && password.back() == '\r') password.pop_back();
    if (password.empty()) Fail(kExitBadInput, "no password on stdin");
    ApiClient api(login->client);
    api.Call("PUT", "/v1/registry-credentials/" + net::PercentEncode(login->registry) + "/" + net::PercentEncode(login->queue),
             json{{"username", login->username}, {"password", password}}.dump());
    std::cout << "queue " << login->queue << " pulls from " << login->registry << " as " << login->username << "\n";
  });
  auto logout = std::make_shared<LoginArgs>();
  CLI::App* out = queues->add_subcommand("logout", "Remove a queue's login to a registry");
  AddClientFlags(out, &logout->client);
  out->add_option("queue", logout->queue, "Queue path")->required();
  out->add_option("registry", logout->registry, "Registry host[:port]")->required();
  out->callback([logout] {
    ApiClient api(logout->client);
    api.Call("DELETE", "/v1/registry-credentials/" + net::PercentEncode(logout->registry) + "/" + net::PercentEncode(logout->queue));
    std::cout << "queue " << logout->queue << " no longer logs in to " << logout->registry << "\n";
  });
  AddListCommand(*queues, "logins", "List the registry logins of the queues you administer (never their passwords)",
                 "/v1/registry-credentials", PrintLogins);
}

struct NodeArgs {
  ClientOptions client;
  std::vector<std::string> names;
};

// One process and one connection for any number of nodes: releasing a cluster
// of 64 cordoned nodes is one command, as `scontrol update nodename=...` is.
// JSON output: the node's object for one node, an array of them for several.
void AddNodeAction(CLI::App* nodes, const char* action, const char* help) {
  auto args = std::make_shared<NodeArgs>();
  CLI::App* cmd = nodes->add_subcommand(action, help);
  AddClientFlags(cmd, &args->client);
  cmd->add_option("node", args->names, "Node names")->required();
  cmd->callback([args, action = std::string(action)] {
    ApiClient api(args->client);
    json answers = json::array();
    for (const std::string& name : args->names) {
      const json n = api.Call("POST", "/v1/nodes/" + net::PercentEncode(name) + "/" + action);
      if (args->client.output != "json") std::cout << "node " << name << ": " << n["state"].get<std::string>() << "\n";
      answers.push_back(n);
    }
    if (args->client.output == "json") PrintJson(answers.size() == 1 ? answers[0] : answers);
  });
}

struct QueueArgs {
  ClientOptions client;
  std::string name;
  double guaranteed = 0, weight = 1;
  double limit = -1, user_limit = -1;
  std::vector<std::string> admins, members;
  bool require_image = false, allow_root_containers = false;
};

std::atomic<bool> interrupted{false};

void Top(const ClientOptions& client, double interval, bool once) {
  ApiClient api(client);
  std::signal(SIGINT, [](int) { interrupted = true; });
  do {
    const json cluster = api.Call("GET", "/v1/cluster");
    const json nodes = api.Call("GET", "/v1/nodes");
    const json queues = api.Call("GET", "/v1/queues");
    if (client.output == "json") {
      PrintJson({{"cluster", cluster}, {"nodes", nodes["nodes"]}, {"queues", queues["queues"]}});
    } else {
      if (!once) std::cout << "\x1b[H\x1b[2J";  // clear the terminal between refreshes
      const double total = cluster["gpus"].get<double>();
      const double used = cluster["allocatedGpus"].get<double>();
      std::cout << "tessera top   nodes " << cluster["readyNodes"].get<std::int64_t>() << "/" << cluster["nodes"].get<std::int64_t>()
                << " ready   GPUs " << FormatGpus(used) << "/" << FormatGpus(total) << " allocated ("
                << (total > 0 ? static_cast<int>(100 * used / total) : 0) << "%)   jobs " << cluster["runningJobs"].get<std::int64_t>()
                << " running, " << cluster["pendingJobs"].get<std::int64_t>() << " pending   last cycle "
                << cluster["lastCycleMs"].get<double>() << " ms\n\n";
      PrintNodes(nodes);
      std::cout << "\n";
      PrintQueues(queues);
    }
    for (int i = 0; !once && !interrupted && i < static_cast<int>(interval * 10); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (!once && !interrupted);
}

}  // namespace

void AddClusterCommands(CLI::App& app) {
  {
    CLI::App* nodes = AddListCommand(app, "nodes", "List nodes; cordon, uncordon or drain some", "/v1/nodes", PrintNodes);
    AddNodeAction(nodes, "cordon", "Place no new work on these nodes");
    AddNodeAction(nodes, "uncordon", "Open cordoned nodes again");
    AddNodeAction(nodes, "drain", "Cordon nodes and requeue the work running on them");
  }
  {
    CLI::App* queues = AddListCommand(app, "queues", "List queues; set or delete one", "/v1/queues", PrintQueues);
    auto set = std::make_shared<QueueArgs>();
    CLI::App* set_cmd = queues->add_subcommand("set", "Create or update a queue, e.g. research/nlp --guaranteed 32");
    AddClientFlags(set_cmd, &set->client);
    set_cmd->add_option("queue", set->name, "Queue path")->required();
    set_cmd->add_option("--guaranteed", set->guaranteed, "GPUs the queue can always get back");
    set_cmd->add_option("--limit", set->limit, "GPUs the queue may never exceed (default: none)");
    set_cmd->add_option("--user-limit", set->user_limit, "GPUs the jobs of any one user may hold in this queue and below (default: no limit)");
    set_cmd->add_option("--weight", set->weight, "Fair-share weight");
    set_cmd->add_option("--admins", set->admins, "Users who manage this queue and those below it (comma-separated)")->delimiter(',');
    set_cmd->add_option("--members", set->members, "Users who may submit here and below (comma-separated)")->delimiter(',');
    set_cmd->add_flag("--require-image", set->require_image, "Every task here and below must run from an image");
    set_cmd->add_flag("--allow-root-containers", set->allow_root_containers, "Containers here and below may run as uid 0");
    set_cmd->callback([set] {
      ApiClient api(set->client);
      // A queue is set whole, as PUT /v1/queues does: what is not given is the default.
      json body = {{"guaranteed", set->guaranteed},
                   {"weight", set->weight},
                   {"requireImage", set->require_image},
                   {"allowRootContainers", set->allow_root_containers}};
      if (set->limit >= 0) body["limit"] = set->limit;
      if (set->user_limit >= 0) body["userLimit"] = set->user_limit;
      if (!set->admins.empty()) body["admins"] = set->admins;
      if (!set->members.empty()) body["members"] = set->members;
      api.Call("PUT", "/v1/queues/" + net::PercentEncode(set->name), body.dump());
      std::cout << "queue " << set->name << " set\n";
    });
    auto del = std::make_shared<QueueArgs>();
    CLI::App* del_cmd = queues->add_subcommand("delete", "Delete an empty queue");
    AddClientFlags(del_cmd, &del->client);
    del_cmd->add_option("queue", del->name, "Queue path")->required();
    del_cmd->callback([del] {
      ApiClient api(del->client);
      api.Call("DELETE", "/v1/queues/" + net::PercentEncode(del->name));
      std::cout << "queue " << del->name << " deleted\n";
    });
    AddLoginCommands(queues);
  }
  {
    auto args = std::make_shared<ClientOptions>();
    auto interval = std::make_shared<double>(2.0);
    auto once = std::make_shared<bool>(false);
    CLI::App* cmd = app.add_subcommand("top", "The cluster at a glance: GPUs, nodes, queues, refreshed");
    AddClientFlags(cmd, args.get());
    cmd->add_option("--interval", *interval, "Seconds between refreshes")->capture_default_str();
    cmd->add_flag("--once", *once, "Print once and exit");
    cmd->callback([args, interval, once] { Top(*args, *interval, *once || args->output == "json"); });
  }
}

}  // namespace tessera::cli
