// All jobs the scheduler knows, by JobId, with the pending and running sets
// kept as dense id lists (O(1) insert and erase) so that a cycle touches only
// live jobs, never the whole history. Ended jobs may be forgotten (the
// server's retention); their ids are never handed out again.
//
// Arrays (model/job_array.h): an array job reserves the ids of its elements
// when it is added, is in the pending set while it has elements left to
// start and never in the running set (it holds nothing), and its state
// follows its elements': pending while some are left to start, running while
// any is active, and then failed if any failed, else cancelled if any was,
// else succeeded. Only a cancel ends it sooner (SetState to an end).
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
  // Adds a job under the id it carries, which must be at least next_id(), or
  // an array element's reserved id: a job put back as it was (recovery,
  // rebuilds). An array job is put before its elements; its counts are
  // made again from them.
  void Put(Job job);
  Job& at(JobId id) { return jobs_.at(id); }
  const Job& at(JobId id) const { return jobs_.at(id); }
  bool contains(JobId id) const { return jobs_.contains(id); }
  // In the order added: id order, but for array elements, which come when made.
  const std::vector<Job>& all() const { return jobs_.values(); }
  std::size_t size() const { return jobs_.size(); }
  JobId next_id() const { return jobs_.end(); }
  // Ids below `next` are taken, though not here (they were forgotten).
  void SkipIds(JobId next) { jobs_.SkipTo(next); }
  JobId FindByName(std::string_view name) const;  // the latest job with that name (never an array element)

  // Forgets the given ended jobs; a name then finds the latest of its jobs
  // that remains. An array's elements go with it or before it.
  void Forget(const std::vector<JobId>& ended);

  const std::vector<JobId>& pending() const { return pending_; }
  const std::vector<JobId>& running() const { return running_; }
  // Moves the job to `state`, updating the pending and running sets (and an
  // element's array).
  void SetState(JobId id, JobState state);

  // Makes the array job's next element, pending (the parent must CanSpawn).
  JobId Spawn(JobId parent);
  // Makes the element at `position` of the array job, which must not exist
  // yet, in the ended state `end`: an element cancelled before it started.
  JobId AddEnded(JobId parent, std::int32_t position, JobState end);
  // Takes back the element made last (a statement's rollback).
  void Unspawn(JobId element);

 private:
  std::vector<JobId>* SetFor(const Job& job, JobState state);
  void Move(Job& job, JobState state);  // the state and the sets; nothing else
  // The array's state from its counts, and its place in the sets; an array
  // that ended stays ended.
  void UpdateArray(Job& parent);
  void Insert(std::vector<JobId>& set, Job& job);
  void Erase(std::vector<JobId>& set, Job& job);

  IdMap<JobId, Job> jobs_;
  std::vector<JobId> pending_, running_;
  std::unordered_map<std::string, JobId> by_name_;
};

}  // namespace tessera::model
