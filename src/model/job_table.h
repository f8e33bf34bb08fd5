// All jobs the scheduler knows, by JobId, with the pending and running sets
// kept as dense id lists (O(1) insert and erase) so that a cycle touches only
// live jobs, never the whole history. Ended jobs may be forgotten (the
// server's retention); their ids are never handed out again.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/id_map.h"
#include "model/job.h"

namespace tessera::model {

class JobTable {
 public:
  JobId Add(Job job);  // assigns the next id; the job keeps its state
  // Adds a job under the id it carries, which must be at least next_id():
  // a job put back as it was (recovery, rebuilds).
  void Put(Job job);
  Job& at(JobId id) { return jobs_.at(id); }
  const Job& at(JobId id) const { return jobs_.at(id); }
  bool contains(JobId id) const { return jobs_.contains(id); }
  const std::vector<Job>& all() const { return jobs_.values(); }  // in id order
  std::size_t size() const { return jobs_.size(); }
  JobId next_id() const { return jobs_.end(); }
  // Ids below `next` are taken, though not here (they were forgotten).
  void SkipIds(JobId next) { jobs_.SkipTo(next); }
  JobId FindByName(std::string_view name) const;  // the latest job with that name

  // Forgets the given ended jobs; a name then finds the latest of its jobs
  // that remains.
  void Forget(const std::vector<JobId>& ended);

  const std::vector<JobId>& pending() const { return pending_; }
  const std::vector<JobId>& running() const { return running_; }
  // Moves the job to `state`, updating the pending and running sets.
  void SetState(JobId id, JobState state);

 private:
  std::vector<JobId>* SetFor(JobState state);
  void Insert(std::vector<JobId>& set, Job& job);
  void Erase(std::vector<JobId>& set, Job& job);

  IdMap<JobId, Job> jobs_;
  std::vector<JobId> pending_, running_;
  std::unordered_map<std::string, JobId> by_name_;
};

}  // namespace tessera::model
