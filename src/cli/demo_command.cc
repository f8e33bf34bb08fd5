// tessera demo: the scheduling core on a bundled example. Loads a cluster, a
// queue tree and a set of jobs (examples/ by default), runs one scheduling
// cycle on a virtual clock and prints where every job went, why the others
// wait, and how full the cluster and each queue are.
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "base/quantity.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "sched/scheduler.h"
#include "spec/cluster_yaml.h"
#include "spec/job_yaml.h"
#include "spec/queue_yaml.h"

namespace tessera::cli {
namespace {

struct DemoOptions {
  std::string cluster = "examples/cluster.yaml";
  std::string queues = "examples/queues.yaml";
  std::string jobs = "examples/jobs.yaml";
};

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Placement(const model::Job& job, const model::Cluster& cluster) {
  std::map<std::string, std::vector<std::string>> by_node;  // node -> GPU list
  for (const model::TaskPlacement& task : job.placements) {
    auto& gpus = by_node[cluster.node(task.node).name];
    for (const model::GpuShare& share : task.gpus) {
      std::string gpu = std::to_string(cluster.gpu(share.gpu).local_index);
      if (share.milli < 1000) gpu += "(" + FormatMilli(share.milli) + ")";
      gpus.push_back(gpu);
    }
  }
  std::string text;
  for (const auto& [node, gpus] : by_node) {
    text += (text.empty() ? "" : " ") + node + ":";
    for (std::size_t i = 0; i < gpus.size(); ++i) text += (i ? "," : "") + gpus[i];
  }
  return text;
}

void PrintUtilization(const sched::SchedulerState& state) {
  const model::Cluster& cluster = state.cluster();
  std::printf("\nUtilization\n");
  Table leaves({"LEAF", "NODES", "GPUS", "ALLOCATED", "WHOLE-FREE", "SHARED"});
  for (std::int32_t leaf = 0; leaf < cluster.GroupCount(model::TopologyLevel::kLeaf); ++leaf) {
    const model::NodeGroup& group = cluster.Group(model::TopologyLevel::kLeaf, leaf);
    std::int64_t gpus = 0, milli = 0, free = 0, shared = 0;
    for (model::NodeId id : group.nodes) {
      const model::Node& node = cluster.node(id);
      gpus += node.gpu_count;
      free += node.free_gpus();
      for (std::int32_t local = 0; local < node.gpu_count; ++local) {
        const model::Gpu& gpu = cluster.gpu(node.gpu(local));
        milli += gpu.used_milli;
        shared += gpu.used_milli > 0 && gpu.used_milli < 1000 ? 1 : 0;
      }
    }
    leaves.Add({group.name, std::to_string(group.nodes.size()), std::to_string(gpus), FormatMilli(milli),
                std::to_string(free), std::to_string(shared)});
  }
  leaves.Print();
  const std::int64_t total = cluster.capacity().gpu_milli;
  const std::int64_t used = cluster.allocated().gpu_milli;
  std::printf("cluster: %s of %s GPUs allocated (%.1f%%)\n\n", FormatMilli(used).c_str(), FormatMilli(total).c_str(),
              total ? 100.0 * static_cast<double>(used) / static_cast<double>(total) : 0.0);
  Table queues({"QUEUE", "ALLOCATED", "GUARANTEED", "LIMIT"});
  for (const model::Queue& q : state.queues().queues()) {
    if (q.id == state.queues().root()) continue;
    queues.Add({q.path, FormatMilli(q.allocated.gpu_milli), FormatMilli(q.guaranteed_milli),
                q.limit_milli >= model::kUnlimited ? "-" : FormatMilli(q.limit_milli)});
  }
  queues.Print();
}

void RunDemo(const DemoOptions& options) {
  const auto fail = [](const Status& status) {
    std::fprintf(stderr, "error: %s\n", status.message().c_str());
    throw CLI::RuntimeError(kExitBadInput);
  };
  auto cluster = spec::LoadCluster(options.cluster);
  if (!cluster.ok()) fail(cluster.status());
  auto queue_text = ReadFile(options.queues);
  if (!queue_text.ok()) fail(queue_text.status());
  auto queue_specs = spec::ParseQueueYaml(*queue_text, options.queues);
  if (!queue_specs.ok()) fail(queue_specs.status());
  auto queues = model::QueueTree::Build(*queue_specs);
  if (!queues.ok()) fail(queues.status());
  auto job_text = ReadFile(options.jobs);
  if (!job_text.ok()) fail(job_text.status());
  auto jobs = spec::ParseJobYaml(*job_text, options.jobs, *cluster, *queues);
  if (!jobs.ok()) fail(jobs.status());

  sched::SchedulerState state(std::move(*cluster), std::move(*queues));
  std::printf("Cluster: %zu nodes, %s GPUs (%s); %zu jobs submitted at t=0\n\n", state.cluster().nodes().size(),
              FormatMilli(state.cluster().capacity().gpu_milli).c_str(), options.cluster.c_str(), jobs->size());
  for (model::Job& job : *jobs) state.Submit(std::move(job), 0);

  auto scheduler = sched::Scheduler::Create(sched::SchedulerConfig{});
  if (!scheduler.ok()) fail(scheduler.status());
  sched::NullBinder binder;
  const sched::CycleResult cycle = scheduler->RunCycle(state, 0, binder);

  Table table({"JOB", "QUEUE", "PRIO", "GPUS", "STATE", "PLACEMENT / REASON"});
  for (const sched::Outcome& outcome : cycle.outcomes) {
    const model::Job& job = state.job(outcome.job);
    if (job.state == model::JobState::kPending && outcome.verdict == sched::Verdict::kPlaced) continue;  // evicted later
    const std::string where = job.state == model::JobState::kRunning ? Placement(job, state.cluster())
                                                                      : sched::Explain(outcome, state);
    table.Add({job.name, state.queues().queue(job.queue).path, std::to_string(job.priority),
               FormatMilli(job.TotalRequest().gpu_milli), std::string(model::ToString(job.state)), where});
  }
  table.Print();
  if (cycle.reservation) {
    std::printf("\nreservation: %s starts at t=%lds on %zu reserved node(s)\n", state.job(cycle.reservation->job).name.c_str(),
                static_cast<long>(cycle.reservation->start),
                static_cast<std::size_t>(std::count(cycle.reservation->nodes.begin(), cycle.reservation->nodes.end(), 1)));
  }
  PrintUtilization(state);
}

}  // namespace

void AddDemoCommand(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  auto* cmd = app.add_subcommand("demo", "Schedule an example workload on an example cluster and show the result");
  cmd->add_option("--cluster", options->cluster, "Cluster YAML file, or a shape like \"16 nodes x 8 GPUs\"")
      ->capture_default_str();
  cmd->add_option("--queues", options->queues, "QueueTree YAML file")->capture_default_str();
  cmd->add_option("--jobs", options->jobs, "Job YAML file (several documents)")->capture_default_str();
  cmd->callback([options] { RunDemo(*options); });
}

}  // namespace tessera::cli
