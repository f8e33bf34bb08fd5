#include "model/job_table.h"

#include <cassert>
#include <unordered_set>

namespace tessera::model {

std::vector<JobId>* JobTable::SetFor(const Job& job, JobState state) {
  if (state == JobState::kPending) return &pending_;
  // An array job holds nothing: it is running while its elements are.
  if (state == JobState::kRunning && !job.is_array_parent) return &running_;
  return nullptr;
}

void JobTable::Insert(std::vector<JobId>& set, Job& job) {
  job.set_position_ = static_cast<std::int32_t>(set.size());
  set.push_back(job.id);
}

void JobTable::Erase(std::vector<JobId>& set, Job& job) {
  const auto at = static_cast<std::size_t>(job.set_position_);
  set[at] = set.back();
  jobs_.at(set[at]).set_position_ = static_cast<std::int32_t>(at);
  set.pop_back();
  job.set_position_ = -1;
}

JobId JobTable::Add(Job job) {
  job.id = next_id();
  const JobId id = job.id;
  Put(std::move(job));
  return id;
}

void JobTable::Put(Job job) {
  job.Remember();
  job.set_position_ = -1;
  if (job.is_array_parent) job.array_progress = {};  // counted again as its elements are put
  if (!job.is_array_element()) by_name_[job.name] = job.id;
  const JobId id = job.id;
  Job& added = jobs_.Add(id, std::move(job));
  if (std::vector<JobId>* set = SetFor(added, added.state)) Insert(*set, added);
  if (added.is_array_parent) {
    jobs_.SkipTo(ArrayElementId(id, added.array->size()));  // its elements' ids
    UpdateArray(added);
  } else if (added.is_array_element()) {
    Job& parent = jobs_.at(added.array_parent);
    const std::int32_t position = id.value() - parent.id.value() - 1;
    if (position == parent.array_progress.next) ++parent.array_progress.next;
    parent.array_progress[added.state] += 1;
    UpdateArray(parent);
  }
}

JobId JobTable::FindByName(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? JobId() : it->second;
}

void JobTable::Move(Job& job, JobState state) {
  if (std::vector<JobId>* from = SetFor(job, job.state)) Erase(*from, job);
  job.state = state;
  if (std::vector<JobId>* to = SetFor(job, state)) Insert(*to, job);
}

void JobTable::SetState(JobId id, JobState state) {
  Job& job = jobs_.at(id);
  if (job.state == state) return;
  const JobState before = job.state;
  Move(job, state);
  if (job.is_array_element()) {
    Job& parent = jobs_.at(job.array_parent);
    parent.array_progress[before] -= 1;
    parent.array_progress[state] += 1;
    UpdateArray(parent);
  }
}

void JobTable::UpdateArray(Job& parent) {
  const JobState now = parent.state;
  if (now != JobState::kPending && now != JobState::kRunning) return;  // cancelled: stays so
  const ArrayProgress& p = parent.array_progress;
  const JobState state = p.created() < parent.array->size() ? JobState::kPending
                         : p.active() > 0                   ? JobState::kRunning
                         : p[JobState::kFailed] > 0         ? JobState::kFailed
                         : p[JobState::kCancelled] > 0      ? JobState::kCancelled
                                                            : JobState::kSucceeded;
  if (state != now) Move(parent, state);
}

JobId JobTable::Spawn(JobId parent_id) {
  Job& parent = jobs_.at(parent_id);
  assert(parent.CanSpawn());
  std::int32_t& next = parent.array_progress.next;
  while (jobs_.contains(ArrayElementId(parent_id, next))) ++next;  // cancelled before they started
  Job element = ArrayElement(parent, next);
  const JobId id = element.id;
  Put(std::move(element));  // moves `next` past it
  return id;
}

JobId JobTable::AddEnded(JobId parent, std::int32_t position, JobState end) {
  Job element = ArrayElement(jobs_.at(parent), position);
  assert(!jobs_.contains(element.id));
  element.state = end;
  const JobId id = element.id;
  Put(std::move(element));
  return id;
}

void JobTable::Unspawn(JobId id) {
  Job& element = jobs_.at(id);
  assert(element.is_array_element() && element.state == JobState::kPending);
  Erase(pending_, element);
  Job& parent = jobs_.at(element.array_parent);
  parent.array_progress.next = id.value() - parent.id.value() - 1;  // those after it exist: Spawn skips them
  parent.array_progress[JobState::kPending] -= 1;
  UpdateArray(parent);
  jobs_.EraseLast(id);
}

void JobTable::Forget(const std::vector<JobId>& ended) {
  if (ended.empty()) return;
  std::unordered_set<std::string> orphaned;  // names whose latest job goes
  for (const JobId id : ended) {
    const Job& job = jobs_.at(id);
    assert(SetFor(job, job.state) == nullptr);
    if (const auto it = by_name_.find(job.name); it != by_name_.end() && it->second == id) {
      by_name_.erase(it);
      orphaned.insert(job.name);
    }
  }
  jobs_.Erase(ended);
  // Such a name now finds the latest job of it that remains, as it would in
  // a table rebuilt from the remaining jobs.
  if (orphaned.empty()) return;
  for (const Job& job : jobs_.values()) {
    if (orphaned.contains(job.name) && !job.is_array_element()) by_name_[job.name] = job.id;
  }
}

}  // namespace tessera::model
