// The cluster's record for what-if replays: what ran, on what, under which
// configuration. Every part is in a form with a reader of its own, so that
// `tessera whatif` rebuilds the server's inputs exactly: inventories as the
// agent protocol writes them, queues as a QueueTree document (JSON is YAML),
// the SchedulerConfig document as the server read it, and each job's spec as
// it was submitted.
#include "controlplane/control_plane.h"

namespace tessera::controlplane {

using nlohmann::json;

namespace {

json QueueTreeDocument(const std::vector<model::QueueSpec>& specs) {
  // Milli-GPUs as written ("2500m"): exact, however large (the default queue's guarantee is "all").
  const auto gpus = [](std::int64_t milli) { return std::to_string(milli) + "m"; };
  json queues = json::array();
  for (const model::QueueSpec& q : specs) {
    json j = {{"name", q.path}, {"guaranteed", gpus(q.guaranteed_milli)}, {"weight", q.weight}};
    if (q.limit_milli < model::kUnlimited) j["limit"] = gpus(q.limit_milli);
    if (q.user_limit_milli < model::kUnlimited) j["userLimit"] = gpus(q.user_limit_milli);
    if (q.require_image) j["requireImage"] = true;
    if (q.allow_root_containers) j["allowRootContainers"] = true;
    queues.push_back(std::move(j));
  }
  return {{"apiVersion", "tessera/v1"}, {"kind", "QueueTree"}, {"spec", {{"queues", std::move(queues)}}}};
}

bool Ended(model::JobState state) {
  return state == model::JobState::kSucceeded || state == model::JobState::kFailed || state == model::JobState::kCancelled;
}

}  // namespace

json ControlPlane::ClusterRecord() {
  std::lock_guard lock(mu_);
  EnsureState();
  json nodes = json::array();
  for (const std::string& name : node_order_) nodes.push_back(api::ToJson(nodes_.at(name).inventory));
  json jobs = json::array();
  std::int64_t unfinished = 0;
  for (const model::Job& job : state_->jobs().all()) {
    if (job.is_array_parent) continue;  // its elements are the jobs that ran
    if (!Ended(job.state)) {
      ++unfinished;
      continue;
    }
    const JobRecord& record = records_.at(job.id);
    json j = {{"id", job.id.value()},
              {"name", job.name},
              {"queue", record.queue},
              {"user", record.user},
              {"state", std::string(model::ToString(job.state))},
              {"submitTime", record.submit_ms},
              {"runningTime", record.running_ms},
              {"endTime", record.end_ms},
              {"spec", record.array_parent.valid() ? records_.at(record.array_parent).spec : record.spec}};
    if (record.array_parent.valid()) j["arrayJobId"] = record.array_parent.value();
    jobs.push_back(std::move(j));
  }
  return {{"time", NowMs()},
          {"nodes", std::move(nodes)},
          {"queues", QueueTreeDocument(queue_specs_)},
          {"scheduler", options_.scheduler_document},
          {"unfinishedJobs", unfinished},
          {"jobs", std::move(jobs)}};
}

}  // namespace tessera::controlplane
