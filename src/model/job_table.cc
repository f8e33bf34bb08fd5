#include "model/job_table.h"

namespace tessera::model {

void JobTable::IdSet::Insert(JobId id, std::vector<std::int32_t>& pos) {
  pos[id.index()] = static_cast<std::int32_t>(ids.size());
  ids.push_back(id);
}

void JobTable::IdSet::Erase(JobId id, std::vector<std::int32_t>& pos) {
  const std::int32_t at = pos[id.index()];
  ids[at] = ids.back();
  pos[ids[at].index()] = at;
  ids.pop_back();
  pos[id.index()] = -1;
}

JobTable::IdSet* JobTable::SetFor(JobState state) {
  if (state == JobState::kPending) return &pending_;
  if (state == JobState::kRunning) return &running_;
  return nullptr;
}

JobId JobTable::Add(Job job) {
  job.id = JobId(static_cast<std::int32_t>(jobs_.size()));
  job.Remember();
  by_name_[job.name] = job.id;
  position_.push_back(-1);
  const JobState state = job.state;
  jobs_.push_back(std::move(job));
  if (IdSet* set = SetFor(state)) set->Insert(jobs_.back().id, position_);
  return jobs_.back().id;
}

JobId JobTable::FindByName(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? JobId() : it->second;
}

void JobTable::SetState(JobId id, JobState state) {
  Job& job = jobs_[id.index()];
  if (job.state == state) return;
  if (IdSet* from = SetFor(job.state)) from->Erase(id, position_);
  job.state = state;
  if (IdSet* to = SetFor(state)) to->Insert(id, position_);
}

}  // namespace tessera::model
