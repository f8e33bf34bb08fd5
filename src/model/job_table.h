// All jobs the scheduler knows, indexed by JobId, with the pending and running
// sets kept as dense id lists (O(1) insert and erase) so that a cycle touches
// only live jobs, never the whole history.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/job.h"

namespace tessera::model {

class JobTable {
 public:
  JobId Add(Job job);  // assigns the id; the job keeps its state
  Job& at(JobId id) { return jobs_[id.index()]; }
  const Job& at(JobId id) const { return jobs_[id.index()]; }
  const std::vector<Job>& all() const { return jobs_; }
  std::size_t size() const { return jobs_.size(); }
  JobId FindByName(std::string_view name) const;  // the latest job with that name

  const std::vector<JobId>& pending() const { return pending_.ids; }
  const std::vector<JobId>& running() const { return running_.ids; }
  // Moves the job to `state`, updating the pending and running sets.
  void SetState(JobId id, JobState state);

 private:
  struct IdSet {
    std::vector<JobId> ids;
    void Insert(JobId id, std::vector<std::int32_t>& pos);
    void Erase(JobId id, std::vector<std::int32_t>& pos);
  };
  IdSet* SetFor(JobState state);

  std::vector<Job> jobs_;
  std::vector<std::int32_t> position_;  // index of each job in its set, -1 when in none
  IdSet pending_, running_;
  std::unordered_map<std::string, JobId> by_name_;
};

}  // namespace tessera::model
