#include "sched/session.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

namespace tessera::sched {

using model::Job;
using model::JobId;
using model::JobState;
using model::QueueId;

std::string_view ToString(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPlaced: return "placed";
    case Verdict::kNotNow: return "not-now";
    case Verdict::kNever: return "never";
  }
  return "?";
}

std::string_view ToString(WaitReason reason) {
  switch (reason) {
    case WaitReason::kNone: return "none";
    case WaitReason::kCapacity: return "capacity";
    case WaitReason::kReservation: return "reservation";
    case WaitReason::kQueueLimit: return "queue-limit";
    case WaitReason::kUserLimit: return "user-limit";
    case WaitReason::kOverGuarantee: return "over-guarantee";
    case WaitReason::kDependency: return "dependency";
    case WaitReason::kDependencyFailed: return "dependency-failed";
    case WaitReason::kSingleton: return "singleton";
    case WaitReason::kBackoff: return "backoff";
    case WaitReason::kArrayLimit: return "array-limit";
    case WaitReason::kInfeasible: return "infeasible";
  }
  return "?";
}

Session::Session(SchedulerState& state, Plugins& plugins, const SchedulerConfig& config, Time now)
    : state_(state), plugins_(plugins), config_(config), now_(now), statement_(state, now),
      subtree_share_(state.queues().queues().size(), std::numeric_limits<double>::quiet_NaN()),
      own_share_(subtree_share_) {
  BuildStream();
}

bool Session::Eligible(Job& job) {
  if (!job.never_reason.empty()) {
    Record(job.id, Verdict::kNever, WaitReason::kInfeasible);
    return false;
  }
  if (job.not_before > now_) {
    Record(job.id, Verdict::kNotNow, WaitReason::kBackoff, static_cast<std::int32_t>(std::min<Time>(job.not_before - now_, 1 << 30)));
    return false;
  }
  for (const model::Dependency& dep : job.depends_on) {
    const JobId other = !dep.job_id.valid()                   ? state_.jobs().FindByName(dep.job_name)
                        : state_.jobs().contains(dep.job_id) ? dep.job_id
                                                              : JobId();
    const JobState s = other.valid() ? state_.job(other).state : JobState::kPending;
    const bool ended = s == JobState::kSucceeded || s == JobState::kFailed || s == JobState::kCancelled;
    const bool unmet = (dep.when == model::Dependency::When::kSucceeded && s != JobState::kSucceeded) ||
                       (dep.when == model::Dependency::When::kFailed && s == JobState::kSucceeded);
    if (ended && unmet) {
      Record(job.id, Verdict::kNever, WaitReason::kDependencyFailed, other.value());
      return false;
    }
    if (!ended) {
      Record(job.id, Verdict::kNotNow, WaitReason::kDependency, other.valid() ? other.value() : -1);
      return false;
    }
  }
  if (job.singleton) {
    const JobId first = FirstActive(job);
    if (first != job.id) {
      Record(job.id, Verdict::kNotNow, WaitReason::kSingleton, first.value());
      return false;
    }
  }
  // An array job is pending while it has elements left to start; its limit
  // may hold them back.
  if (job.is_array_parent && !job.CanSpawn()) {
    Record(job.id, Verdict::kNotNow, WaitReason::kArrayLimit, job.array->max_running);
    return false;
  }
  return true;
}

JobId Session::FirstActive(const Job& job) {
  if (!first_active_built_) {
    // Once a cycle, and only when a singleton is pending: every pending or
    // running job by (user, name), the oldest kept.
    first_active_built_ = true;
    for (const std::vector<JobId>* set : {&state_.jobs().pending(), &state_.jobs().running()}) {
      for (JobId id : *set) {
        const Job& j = state_.job(id);
        auto [it, inserted] = first_active_.try_emplace(j.user + '\n' + j.name, id);
        if (!inserted && id < it->second) it->second = id;
      }
    }
  }
  const auto it = first_active_.find(job.user + '\n' + job.name);
  return it == first_active_.end() ? job.id : it->second;
}

Seconds Session::Walltime(const model::Job& job) const {
  if (job.walltime > 0) return job.walltime;
  const RunTimeDistribution* history = state_.history().For(job.queue, job.MinGpuMilli());
  if (!history) return config_.default_walltime;
  const double before = TimeRun(job, job.state == model::JobState::kRunning ? job.start_time : now_);
  return std::max<Seconds>(1, static_cast<Seconds>(history->MeanBeyond(TimeRun(job, now_)) - before));
}

void Session::BuildStream() {
  const JobOrder& order = *plugins_.job_order;
  stream_.reserve(state_.jobs().pending().size());
  for (JobId id : state_.jobs().pending()) {
    Job& job = state_.job(id);
    if (Eligible(job)) stream_.push_back({job.priority, job.queue, order.Rank(job, now_), job.submit_time, id});
  }
  std::sort(stream_.begin(), stream_.end(), [](const StreamEntry& x, const StreamEntry& y) {
    if (x.priority != y.priority) return x.priority > y.priority;
    return std::tie(x.queue, x.rank, x.submit, x.id) < std::tie(y.queue, y.rank, y.submit, y.id);
  });
  for (std::size_t i = 0; i < stream_.size();) {
    const std::size_t begin = i;
    while (i < stream_.size() && stream_[i].priority == stream_[begin].priority) ++i;
    bands_.push_back(Band{begin, i});
  }
}

void Session::EnterBand(const Band& band) {
  const model::QueueTree& queues = state_.queues();
  cursor_.assign(queues.queues().size(), {0, 0});
  remaining_.assign(queues.queues().size(), 0);
  for (std::size_t i = band.begin; i < band.end;) {
    const QueueId queue = stream_[i].queue;
    const std::size_t start = i;
    while (i < band.end && stream_[i].queue == queue) ++i;
    cursor_[queue.index()] = {start, i};
    for (QueueId q = queue; q.valid(); q = queues.queue(q).parent) {
      remaining_[q.index()] += static_cast<std::int64_t>(i - start);
    }
  }
}

double Session::Share(QueueId queue, bool own) {
  double& cached = (own ? own_share_ : subtree_share_)[queue.index()];
  if (std::isnan(cached)) {
    const model::Queue& q = state_.queues().queue(queue);
    cached = plugins_.queue_order->Share(q, own ? q.own_allocated : q.allocated, state_.cluster().capacity());
  }
  return cached;
}

void Session::ForgetShares(QueueId queue) {
  for (QueueId q = queue; q.valid(); q = state_.queues().queue(q).parent) {
    subtree_share_[q.index()] = own_share_[q.index()] = std::numeric_limits<double>::quiet_NaN();
  }
}

// Descends the queue tree: at each level the child subtree with the smallest
// fair-share key goes next, a queue's own jobs competing as one more child
// with their own usage; ties go to the queue's own jobs, then to the lower
// queue id. Shares are cached, so a pick costs a few comparisons per level,
// whatever the number of queues.
std::optional<JobId> Session::NextPending() {
  const model::QueueTree& queues = state_.queues();
  while (band_ < bands_.size()) {
    if (!band_entered_) {
      EnterBand(bands_[band_]);
      band_entered_ = true;
    }
    if (remaining_[queues.root().index()] == 0) {
      ++band_;
      band_entered_ = false;
      continue;
    }
    QueueId at = queues.root();
    while (true) {
      const auto& own = cursor_[at.index()];
      bool found = own.first < own.second;
      double best_share = found ? Share(at, true) : 0;
      QueueId best;  // invalid: the queue's own jobs
      for (QueueId child : queues.queue(at).children) {
        if (remaining_[child.index()] == 0) continue;
        const double share = Share(child, false);
        if (!found || share < best_share) {
          best = child;
          best_share = share;
          found = true;
        }
      }
      if (!best.valid()) break;
      at = best;
    }
    const JobId job = stream_[cursor_[at.index()].first++].id;
    for (QueueId q = at; q.valid(); q = queues.queue(q).parent) --remaining_[q.index()];
    last_streamed_ = at;
    return job;
  }
  return std::nullopt;
}

PlaceVerdict::Kind Session::FindPlacement(JobId id, const PlaceOptions& options) {
  Job& job = state_.job(id);
  const std::uint64_t key = job.Shape() ^ (options.excluded_nodes ? 0x8000000000000000ULL : 0);
  if (failed_shapes_.contains(key)) return PlaceVerdict::Kind::kNotNow;
  scratch_.clear();
  PlaceOptions within_quota = options;
  within_quota.max_gpu_milli = plugins_.admission->GpuHeadroom(job, state_.queues());
  const PlaceVerdict verdict = plugins_.placement->Place(job, state_.cluster(), within_quota, scratch_);
  switch (verdict.kind()) {
    case PlaceVerdict::Kind::kFits: break;
    case PlaceVerdict::Kind::kNotNow: failed_shapes_.insert(key); break;
    // Kept in the job, like the feasibility check's answer: later cycles
    // report it without asking again (state.h).
    case PlaceVerdict::Kind::kNever: job.never_reason = verdict.never_reason(); break;
  }
  return verdict.kind();
}

PlaceVerdict::Kind Session::TryPlace(JobId id, const PlaceOptions& options) {
  const PlaceVerdict::Kind verdict = FindPlacement(id, options);
  if (verdict != PlaceVerdict::Kind::kFits) return verdict;
  Bind(id, std::move(scratch_));
  // An array job that may start another element goes back into the stream
  // where it was taken from: the next pick weighs its queue's new share.
  const QueueId at = std::exchange(last_streamed_, QueueId());
  if (at.valid() && state_.job(id).CanSpawn() && stream_[cursor_[at.index()].first - 1].id == id) {
    --cursor_[at.index()].first;
    for (QueueId q = at; q.valid(); q = state_.queues().queue(q).parent) ++remaining_[q.index()];
  }
  return verdict;
}

PlaceVerdict::Kind Session::Fits(JobId id, const PlaceOptions& options) { return FindPlacement(id, options); }

void Session::Bind(JobId job, std::vector<model::TaskPlacement> placements) {
  const JobId bound = state_.job(job).is_array_parent ? statement_.Spawn(job) : job;
  statement_.Bind(bound, std::move(placements));
  ForgetShares(state_.job(bound).queue);
  bound_.insert(bound);
  ++result_.placed;
}

void Session::Evict(JobId victim, JobId preemptor, EvictReason reason) {
  statement_.Evict(victim, preemptor, reason);
  ForgetShares(state_.job(victim).queue);
  result_.evictions.push_back({victim, preemptor, reason});
  failed_shapes_.clear();
}

void Session::Record(JobId job, Verdict verdict, WaitReason reason, std::int32_t detail) {
  result_.outcomes.push_back(Outcome{job, verdict, reason, detail, false, false});
  if (reason == WaitReason::kCapacity || reason == WaitReason::kReservation || reason == WaitReason::kQueueLimit ||
      reason == WaitReason::kUserLimit || reason == WaitReason::kOverGuarantee) {
    waiting_.push_back(result_.outcomes.size() - 1);
  }
}

}  // namespace tessera::sched
