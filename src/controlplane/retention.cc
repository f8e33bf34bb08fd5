// Retention: ended jobs are forgotten once they ended --job-retention ago or,
// oldest first, once more than --max-ended-jobs have ended, as Slurm's
// MinJobAge and MaxJobCount and Kubernetes' ttlSecondsAfterFinished bound
// what a controller keeps. Without it a server that runs for months holds
// every job it ever ran in memory, in the store, and in every recovery.
//
// A forgotten job leaves behind its GPU time, summed by queue, user and the
// hour it ended (accounting and the GPU-time counters keep counting it), its
// events while they stay in the event window, and its id, which is never
// handed out again. Its record, spec and task logs are deleted.
#include <algorithm>
#include <filesystem>
#include <set>

#include "api/json_reader.h"
#include "controlplane/control_plane.h"

namespace tessera::controlplane {

using nlohmann::json;

void ControlPlane::AddForgottenUsage(const UsageKey& key, const Usage& usage) {
  Usage& sum = forgotten_usage_[key];
  sum.jobs += usage.jobs;
  sum.gpu_seconds += usage.gpu_seconds;
  sum.idle_gpu_seconds += usage.idle_gpu_seconds;
  const json value = {{"queue", key.queue},   {"user", key.user},
                      {"hour", key.hour},     {"jobs", sum.jobs},
                      {"gpuSeconds", sum.gpu_seconds}, {"idleGpuSeconds", sum.idle_gpu_seconds}};
  writes_.push_back(store::Mutation::Put(store::Collection::kUsage, std::to_string(key.hour) + "|" + key.queue + "|" + key.user,
                                         api::Dump(value)));
}

void ControlPlane::ForgetEndedJobs(std::int64_t now_ms) {
  const std::int64_t cutoff = now_ms - options_.job_retention.count() * 1000;
  const auto due = [&] { return !ended_.empty() && (records_.at(ended_.front()).end_ms < cutoff || ended_.size() > options_.max_ended_jobs); };
  if (!due()) return;
  // A job a pending job still waits for by name stays until that one starts.
  std::set<std::string> awaited;
  for (const model::JobId id : state_->jobs().pending()) {
    for (const model::Dependency& dep : state_->job(id).depends_on) awaited.insert(dep.job_name);
  }
  std::vector<model::JobId> forget, kept;
  for (; due(); ended_.pop_front()) {
    const model::JobId id = ended_.front();
    const std::string& name = state_->job(id).name;
    if (awaited.contains(name) && state_->jobs().FindByName(name) == id) {
      kept.push_back(id);
      continue;
    }
    forget.push_back(id);
  }
  ended_.insert(ended_.end(), kept.begin(), kept.end());
  if (forget.empty()) return;

  std::vector<std::filesystem::path> logs;
  for (const model::JobId id : forget) {
    const JobRecord& record = records_.at(id);
    if (record.gpu_seconds > 0) {
      AddForgottenUsage({record.queue, record.user, record.end_ms / kMsPerHour}, {1, record.gpu_seconds, record.idle_gpu_seconds});
    }
    writes_.push_back(store::Mutation::Delete(store::Collection::kJobs, store::NumericKey(id.value())));
    writes_.push_back(store::Mutation::Delete(store::Collection::kJobSpecs, store::NumericKey(id.value())));
    if (!options_.log_dir.empty()) logs.push_back(std::filesystem::path(options_.log_dir) / std::to_string(id.value()));
  }
  writes_.push_back(store::Mutation::Put(store::Collection::kMeta, kNextJobIdKey, std::to_string(records_.end().value())));
  std::sort(forget.begin(), forget.end());
  records_.EraseIf([&](model::JobId id, const JobRecord&) { return std::binary_search(forget.begin(), forget.end(), id); });
  state_->Forget(forget);
  metrics_->forgotten.Increment(static_cast<double>(forget.size()));
  // The logs go once the deletion is durable: a crash before it brings the
  // jobs back, and they keep their logs.
  Commit([logs = std::move(logs)] {
    std::error_code ec;
    for (const std::filesystem::path& dir : logs) std::filesystem::remove_all(dir, ec);
  });
}

}  // namespace tessera::controlplane
