#include "model/job_table.h"

#include <cassert>
#include <unordered_set>

namespace tessera::model {

std::vector<JobId>* JobTable::SetFor(JobState state) {
  if (state == JobState::kPending) return &pending_;
  if (state == JobState::kRunning) return &running_;
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
  by_name_[job.name] = job.id;
  const JobState state = job.state;
  Job& added = jobs_.Add(job.id, std::move(job));
  if (std::vector<JobId>* set = SetFor(state)) Insert(*set, added);
}

JobId JobTable::FindByName(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? JobId() : it->second;
}

void JobTable::SetState(JobId id, JobState state) {
  Job& job = jobs_.at(id);
  if (job.state == state) return;
  if (std::vector<JobId>* from = SetFor(job.state)) Erase(*from, job);
  job.state = state;
  if (std::vector<JobId>* to = SetFor(state)) Insert(*to, job);
}

void JobTable::Forget(const std::vector<JobId>& ended) {
  if (ended.empty()) return;
  std::unordered_set<std::string> orphaned;  // names whose latest job goes
  for (const JobId id : ended) {
    const Job& job = jobs_.at(id);
    assert(SetFor(job.state) == nullptr);
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
    if (orphaned.contains(job.name)) by_name_[job.name] = job.id;
  }
}

}  // namespace tessera::model
