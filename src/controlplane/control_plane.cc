#include "controlplane/control_plane.h"

#include <algorithm>
#include <set>

#include "api/json_reader.h"
#include "controlplane/inventory_spec.h"
#include "controlplane/record_codecs.h"
#include "spec/job_yaml.h"

namespace tessera::controlplane {

using nlohmann::json;

ControlPlane::ControlPlane(ControlPlaneOptions options, store::StateStore& store, sched::Scheduler scheduler)
    : options_(std::move(options)),
      store_(store),
      commits_(std::make_unique<store::CommitQueue>(store)),
      scheduler_(std::move(scheduler)),
      events_(options_.event_window) {
  queue_specs_ = options_.initial_queues;
}

ControlPlane::~ControlPlane() {
  Stop();
  commits_.reset();  // drains pending writes; their callbacks take mu_
}

std::int64_t ControlPlane::NowMs() const { return options_.clock->NowMs(); }

void ControlPlane::Start() {
  scheduling_thread_ = std::thread([this] { SchedulingLoop(); });
  housekeeping_thread_ = std::thread([this] { HousekeepingLoop(); });
}

void ControlPlane::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_scheduler_.notify_all();
  wake_housekeeping_.notify_all();
  if (scheduling_thread_.joinable()) scheduling_thread_.join();
  if (housekeeping_thread_.joinable()) housekeeping_thread_.join();
  commits_->Flush();
}

void ControlPlane::SetEpoch(std::int64_t epoch) {
  std::lock_guard lock(mu_);
  epoch_ = epoch;
}

ControlPlaneStats ControlPlane::stats() const {
  std::lock_guard lock(mu_);
  ControlPlaneStats s = stats_;
  s.store_transactions = commits_->transactions();
  return s;
}

// --- the scheduler's view, rebuilt from the records ----------------------------

void ControlPlane::EnsureState() {
  if (!rebuild_needed_ && state_) return;
  std::vector<model::NodeSpec> specs;
  for (const std::string& name : node_order_) specs.push_back(NodeSpecOf(nodes_.at(name).inventory));
  Result<model::Cluster> cluster = model::Cluster::Build(specs);
  Result<model::QueueTree> queues = model::QueueTree::Build(queue_specs_);
  // Inventories and queue specs were validated when they were accepted.
  if (!cluster.ok() || !queues.ok()) {
    std::fprintf(stderr, "tessera server: cannot rebuild the cluster model: %s\n",
                 (!cluster.ok() ? cluster.status() : queues.status()).message().c_str());
    return;
  }
  auto next = std::make_unique<sched::SchedulerState>(std::move(*cluster), std::move(*queues));
  if (state_) {
    for (const model::Job& old : state_->jobs().all()) {
      model::Job job = old;
      const model::QueueId queue = next->queues().Find(records_.at(old.id).queue);
      job.queue = queue.valid() ? queue : next->queues().root();
      for (model::TaskPlacement& task : job.placements) {
        const std::string& node_name = state_->cluster().node(task.node).name;
        task.node = *next->cluster().FindNode(node_name);  // nodes are never removed
        for (model::GpuShare& share : task.gpus) {
          share.gpu = next->cluster().node(task.node).gpu(state_->cluster().gpu(share.gpu).local_index);
        }
      }
      next->Restore(std::move(job));
    }
    next->jobs().SkipIds(state_->jobs().next_id());  // forgotten jobs' ids stay taken
    next->AdoptHistory(state_->history().Renumbered(
        [&](model::QueueId old) { return next->queues().Find(state_->queues().queue(old).path); }));
  }
  for (const std::string& name : node_order_) {
    const NodeRecord& node = nodes_.at(name);
    const model::NodeId id = *next->cluster().FindNode(name);
    if (node.cordoned || node.state == NodeState::kLost) next->cluster().SetSchedulable(id, false);
    next->cluster().SetImages(id, ImageKeys(node.images));
    for (const api::GpuInventory& g : node.inventory.gpus) {
      if (!g.healthy || node.unhealthy_gpus.contains(g.index)) next->cluster().SetGpuHealthy(next->cluster().node(id).gpu(g.index), false);
    }
  }
  state_.Replace(std::move(next));
  rebuild_needed_ = false;
}

std::string ControlPlane::QueuePath(model::QueueId id) const { return state_->queues().queue(id).path; }

JobRecord* ControlPlane::FindRecord(std::int64_t id) {
  if (id < 0 || id >= records_.end().value()) return nullptr;
  return records_.find(model::JobId(static_cast<std::int32_t>(id)));
}

Status ControlPlane::NoJob(std::int64_t id) const {
  if (id < 0 || id >= records_.end().value()) return NotFound("no job " + std::to_string(id));
  return NotFound("no job " + std::to_string(id) + ": ended jobs are forgotten " + std::to_string(options_.job_retention.count()) +
                  " s after they end, or sooner beyond the " + std::to_string(options_.max_ended_jobs) +
                  " that ended last (--job-retention, --max-ended-jobs)");
}

// --- events and persistence ------------------------------------------------------

void ControlPlane::Emit(std::string type, std::int64_t job, std::string node, std::string message) {
  const Event& event = events_.Append({0, NowMs(), std::move(type), job, std::move(node), std::move(message)});
  writes_.push_back(store::Mutation::Put(store::Collection::kEvents, store::NumericKey(event.revision), api::Dump(ToJson(event))));
  const std::int64_t expired = event.revision - static_cast<std::int64_t>(options_.event_window);
  if (expired > 0) writes_.push_back(store::Mutation::Delete(store::Collection::kEvents, store::NumericKey(expired)));
  AnswerEventWaiters();
}

void ControlPlane::PersistJob(model::JobId id) {
  // The record as kept: an array's own GPU time is none (its elements hold
  // theirs), which accounting and retention rely on.
  writes_.push_back(
      store::Mutation::Put(store::Collection::kJobs, store::NumericKey(id.value()), api::Dump(JobDocument(id, state_->job(id), records_.at(id)))));
}

void ControlPlane::PersistNode(const NodeRecord& node) {
  writes_.push_back(store::Mutation::Put(store::Collection::kNodes, node.inventory.name, EncodeNode(node)));
}

void ControlPlane::PersistQueues() {
  std::set<std::string> present;
  for (const model::QueueSpec& q : queue_specs_) {
    present.insert(q.path);
    const auto access = queue_access_.find(q.path);
    writes_.push_back(store::Mutation::Put(store::Collection::kQueues, q.path,
                                           EncodeQueue(q, access == queue_access_.end() ? QueueAccess{} : access->second)));
  }
  if (state_) {
    for (const model::Queue& q : state_->queues().queues()) {
      if (!q.path.empty() && !present.contains(q.path)) {
        writes_.push_back(store::Mutation::Delete(store::Collection::kQueues, q.path));
      }
    }
  }
}

void ControlPlane::Commit(std::function<void()> done) {
  std::vector<store::Mutation> batch;
  batch.swap(writes_);
  const std::uint64_t sequence = ++commits_submitted_;
  commits_->Submit(std::move(batch), [this, sequence, done = std::move(done)](const Status& status) {
    if (!status.ok()) {
      // Fail-stop, as databases do when a write cannot be made durable: the
      // memory state is already ahead of the disk, and answering from it would
      // promise what a restart would forget. A restart recovers the last
      // durable state; callers whose answer never came retry.
      std::fprintf(stderr, "tessera server: the state store failed (%s); stopping so that memory and disk never disagree\n",
                   status.message().c_str());
      std::_Exit(70);
    }
    if (done) {
      std::lock_guard lock(mu_);
      done();
    }
    commits_done_.store(sequence);  // callbacks run in commit order
  });
}

void ControlPlane::RequestCycle() {
  cycle_requested_ = true;
  wake_scheduler_.notify_one();
}

// --- views -----------------------------------------------------------------------

json ControlPlane::JobJson(model::JobId id, bool with_spec) const {
  const JobRecord& record = records_.at(id);
  const model::Job& job = state_->job(id);
  json j = JobDocument(id, job, record);
  if (job.is_array_parent) {  // the API shows an array's GPU time as its elements' together
    double held = 0, idle = 0;
    for (const model::JobId element : ElementsOf(id)) {
      held += records_.at(element).gpu_seconds;
      idle += records_.at(element).idle_gpu_seconds;
    }
    j["gpuSeconds"] = held;
    j["idleGpuSeconds"] = idle;
  }
  if (with_spec) j["spec"] = record.array_parent.valid() ? records_.at(record.array_parent).spec : record.spec;
  return j;
}

}  // namespace tessera::controlplane
