#include "cli/recorded_workload.h"

#include <algorithm>

#include "api/agent_protocol.h"
#include "controlplane/inventory_spec.h"
#include "spec/job_yaml.h"
#include "spec/queue_yaml.h"
#include "spec/scheduler_yaml.h"

namespace tessera::cli {
namespace {

using nlohmann::json;

Status Expect(const json& record, const char* key, json::value_t type, const char* what) {
  if (!record.contains(key) || record[key].type() != type) return InvalidArgument(std::string("the record has no ") + key + " (" + what + ")");
  return Status::Ok();
}

Result<std::int64_t> Millis(const json& job, const char* key) {
  if (!job.contains(key) || !job[key].is_number_integer()) return InvalidArgument(std::string(key) + ": expected milliseconds");
  return job[key].get<std::int64_t>();
}

// One recorded job as the simulator's: its spec parsed against the cluster
// and queues it ran under. An array's element runs its array's spec.
Result<simkit::WorkloadJob> ReadJob(const json& j, const model::Cluster& cluster, const model::QueueTree& queues) {
  if (!j.is_object() || !j.contains("spec") || !j["spec"].is_string() || !j.contains("queue") || !j["queue"].is_string()) {
    return InvalidArgument("expected an object with spec and queue");
  }
  const spec::JobParseOptions reload{.check_feasible = false, .reload = true};
  Result<std::vector<model::Job>> parsed = spec::ParseJobYaml(j["spec"].get<std::string>(), "spec", cluster, queues, reload);
  if (!parsed.ok()) return parsed.status();
  if (parsed->size() != 1) return InvalidArgument("spec: expected one job, got " + std::to_string(parsed->size()));
  simkit::WorkloadJob w;
  w.job = std::move(parsed->front());
  w.job.queue = {};  // the simulator resolves `queue` in the tree it runs
  if (w.job.is_array_parent) {
    w.job.is_array_parent = false;
    w.job.array.reset();
  }
  if (j.contains("name") && j["name"].is_string()) w.job.name = j["name"].get<std::string>();
  w.queue = j["queue"].get<std::string>();
  return w;
}

}  // namespace

Result<RecordedCluster> ReadClusterRecord(const json& record, std::int64_t since_ms) {
  if (!record.is_object()) return InvalidArgument("the record is not a JSON object");
  TESSERA_RETURN_IF_ERROR(Expect(record, "nodes", json::value_t::array, "a list of node inventories"));
  TESSERA_RETURN_IF_ERROR(Expect(record, "queues", json::value_t::object, "a QueueTree document"));
  TESSERA_RETURN_IF_ERROR(Expect(record, "scheduler", json::value_t::string, "the SchedulerConfig document"));
  TESSERA_RETURN_IF_ERROR(Expect(record, "jobs", json::value_t::array, "the ended jobs"));
  RecordedCluster out;
  for (std::size_t i = 0; i < record["nodes"].size(); ++i) {
    Result<api::NodeInventory> inventory = api::NodeInventoryFromJson(record["nodes"][i]);
    if (!inventory.ok()) return InvalidArgument("nodes[" + std::to_string(i) + "]: " + inventory.status().message());
    out.nodes.push_back(controlplane::NodeSpecOf(*inventory));
  }
  Result<model::Cluster> cluster = model::Cluster::Build(out.nodes);
  if (!cluster.ok()) return InvalidArgument("nodes: " + cluster.status().message());
  Result<std::vector<model::QueueSpec>> queues = spec::ParseQueueYaml(record["queues"].dump(), "the server's queues");
  if (!queues.ok()) return queues.status();
  out.queues = std::move(*queues);
  Result<model::QueueTree> tree = model::QueueTree::Build(out.queues);
  if (!tree.ok()) return InvalidArgument("queues: " + tree.status().message());
  Result<sched::SchedulerConfig> scheduler =
      spec::ParseSchedulerConfigDocument(record["scheduler"].get<std::string>(), "the server's scheduler configuration");
  if (!scheduler.ok()) return scheduler.status();
  out.scheduler = std::move(*scheduler);
  out.unfinished = record.value("unfinishedJobs", std::int64_t{0});

  out.workload.source = "the server's record";
  for (std::size_t i = 0; i < record["jobs"].size(); ++i) {
    const json& j = record["jobs"][i];
    const std::string where = "jobs[" + std::to_string(i) + "]";
    Result<std::int64_t> submit = Millis(j, "submitTime"), running = Millis(j, "runningTime"), end = Millis(j, "endTime");
    for (const auto* time : {&submit, &running, &end}) {
      if (!time->ok()) return InvalidArgument(where + "." + time->status().message());
    }
    if (*running == 0 || *end < *running) {
      ++out.never_ran;
      continue;
    }
    const bool in_window = *submit >= since_ms;
    if (!in_window && *end >= since_ms) {
      ++out.straddling;
      continue;
    }
    Result<simkit::WorkloadJob> job = ReadJob(j, *cluster, *tree);
    if (!job.ok()) return InvalidArgument(where + ": " + job.status().message());
    job->submit = in_window ? (*submit - since_ms) / 1000 : 0;
    job->duration = std::max<Seconds>(1, (*end - *running + 500) / 1000);
    (in_window ? out.workload.jobs : out.workload.history).push_back(std::move(*job));
  }
  // The simulator takes jobs in submission order.
  std::stable_sort(out.workload.jobs.begin(), out.workload.jobs.end(),
                   [](const simkit::WorkloadJob& a, const simkit::WorkloadJob& b) { return a.submit < b.submit; });
  return out;
}

}  // namespace tessera::cli
