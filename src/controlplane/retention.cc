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
#include "controlplane/record_codecs.h"

namespace tessera::controlplane {

using nlohmann::json;

void ControlPlane::AddForgottenUsage(const UsageKey& key, const Usage& usage) {
  Usage& sum = forgotten_usage_[key];
  sum.jobs += usage.jobs;
  sum.gpu_seconds += usage.gpu_seconds;
  sum.idle_gpu_seconds += usage.idle_gpu_seconds;
  auto [stored_key, value] = EncodeUsage(key, sum);
  writes_.push_back(store::Mutation::Put(store::Collection::kUsage, std::move(stored_key), std::move(value)));
}

void ControlPlane::ForgetEndedJobs(std::int64_t now_ms) {
  // Each pass compacts the job table and the records, so passes are batched:
  // by age at most every kAgePass, by count once the limit is exceeded by a
  // sixteenth, and then down to it. A pass forgets at most kMostPerPass jobs,
  // so that no store transaction grows past what etcd accepts.
  constexpr auto kAgePass = std::chrono::seconds(10);
  constexpr std::size_t kMostPerPass = 2000;
  const std::size_t most = options_.max_ended_jobs;
  const std::int64_t cutoff = now_ms - options_.job_retention.count() * 1000;
  const auto steady = std::chrono::steady_clock::now();
  // A pass that stopped short goes on at the next cycle: below the slack
  // the count alone would never start it again.
  const bool by_count = ended_.size() > most + std::max<std::size_t>(1, most / 16) ||
                        (forgetting_unfinished_ && ended_.size() > most);
  const bool by_age = !ended_.empty() && records_.at(ended_.front()).end_ms < cutoff && steady - forgotten_last_ >= kAgePass;
  if (!by_count && !by_age) return;
  forgotten_last_ = steady;
  // A job that a pending or running job waits for by name stays while it
  // does: a running one may be requeued and wait for it again.
  std::set<std::string> awaited;
  std::set<model::JobId> awaited_ids;  // dependencies by id (tessera sbatch)
  for (const auto* set : {&state_->jobs().pending(), &state_->jobs().running()}) {
    for (const model::JobId id : *set) {
      for (const model::Dependency& dep : state_->job(id).depends_on) {
        if (dep.job_id.valid()) {
          awaited_ids.insert(dep.job_id);
        } else {
          awaited.insert(dep.job_name);
        }
      }
    }
  }
  std::vector<model::JobId> forget, kept;
  const std::uint64_t durable = commits_done_.load();
  forgetting_unfinished_ = false;
  while (!ended_.empty()) {
    const JobRecord& record = records_.at(ended_.front());
    if (record.end_ms >= cutoff && ended_.size() + kept.size() <= most) break;
    // Not before its end is durable and every caller answered (a callback may still read it).
    if (record.end_commit > durable || forget.size() >= kMostPerPass) {
      forgetting_unfinished_ = true;
      break;
    }
    const model::JobId id = ended_.front();
    ended_.pop_front();
    const std::string& name = state_->job(id).name;
    const bool waited_for = awaited_ids.contains(id) || (awaited.contains(name) && state_->jobs().FindByName(name) == id);
    if (waited_for) {
      kept.push_back(id);
      continue;
    }
    forget.push_back(id);
    // An array's elements go with it (they are never in ended_ themselves).
    if (state_->job(id).is_array_parent) {
      for (const model::JobId element : ElementsOf(id)) forget.push_back(element);
    }
  }
  ended_.insert(ended_.end(), kept.begin(), kept.end());
  if (forget.empty()) return;

  std::vector<std::filesystem::path> logs;
  std::set<model::JobId> arrays_counted;
  for (const model::JobId id : forget) {
    const JobRecord& record = records_.at(id);
    if (record.gpu_seconds > 0) {
      // An array counts as one job, however many of its elements held GPUs.
      const bool counts = !record.array_parent.valid() || arrays_counted.insert(record.array_parent).second;
      AddForgottenUsage({record.queue, record.user, record.end_ms / kMsPerHour},
                        {counts ? 1 : 0, record.gpu_seconds, record.idle_gpu_seconds});
    }
    writes_.push_back(store::Mutation::Delete(store::Collection::kJobs, store::NumericKey(id.value())));
    if (!record.array_parent.valid()) writes_.push_back(store::Mutation::Delete(store::Collection::kJobSpecs, store::NumericKey(id.value())));
    if (!options_.log_dir.empty()) logs.push_back(std::filesystem::path(options_.log_dir) / std::to_string(id.value()));
  }
  // The table's next id: past every id given out, an array's reserved ones included.
  writes_.push_back(store::Mutation::Put(store::Collection::kMeta, kNextJobIdKey, std::to_string(state_->jobs().next_id().value())));
  records_.Erase(forget);
  state_.Forget(forget);
  metrics_->forgotten.Increment(static_cast<double>(forget.size()));
  // The logs go once the deletion is durable: a crash before it brings the
  // jobs back, and they keep their logs.
  Commit([logs = std::move(logs)] {
    std::error_code ec;
    for (const std::filesystem::path& dir : logs) std::filesystem::remove_all(dir, ec);
  });
}

}  // namespace tessera::controlplane
