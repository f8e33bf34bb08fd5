// Randomized property test: random clusters (node sizes, GPU models, NUMA,
// node-local and multi-node NVLink domains, leaves, spines), random queue
// trees, and thousands of random submit / finish / fail / repair / cordon /
// checkpoint events. After every cycle the invariant checker must pass, and
// so must what it cannot see on its own:
//   * a running job with a required topology sits inside one domain of it;
//   * no non-preemptible job is ever evicted, and no job bound in a cycle is
//     evicted in that same cycle;
//   * every eviction pays for a preemptor that is running after the cycle;
//   * a job reported "placed" is running; a job reported "never" stays pending.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "base/random.h"
#include "model/invariants.h"
#include "sched/scheduler.h"

namespace tessera::sched {
namespace {

using model::Job;
using model::JobId;
using model::JobState;
using model::TopologyLevel;

model::Cluster RandomCluster(Rng& rng) {
  std::vector<model::NodeSpec> nodes;
  const int count = static_cast<int>(rng.Uniform(2, 24));
  const int per_leaf = static_cast<int>(rng.Uniform(1, 6));
  const int nvl_nodes = rng.Bernoulli(0.25) ? static_cast<int>(rng.Uniform(2, 4)) : 0;
  for (int i = 0; i < count; ++i) {
    model::NodeSpec n;
    n.name = "n" + std::to_string(i);
    const bool small = rng.Bernoulli(0.3);
    n.gpu_model = small ? "A100" : "H100";
    n.gpus = small ? 4 : static_cast<std::int32_t>(rng.Uniform(1, 8));
    n.gpu_memory = (small ? 40LL : 80LL) << 30;
    n.cpu_milli = rng.Uniform(16, 128) * 1000;
    n.memory = rng.Uniform(64, 1024) << 30;
    n.numa_sockets = static_cast<std::int32_t>(rng.Uniform(1, 2));
    n.nvlink_domains = static_cast<std::int32_t>(rng.Uniform(1, 2));
    n.leaf = "leaf" + std::to_string(i / per_leaf);
    n.spine = "spine" + std::to_string(i / per_leaf / 2);
    if (nvl_nodes && !small) n.nvlink_group = "nvl" + std::to_string(i / nvl_nodes);
    nodes.push_back(n);
  }
  auto cluster = model::Cluster::Build(nodes);
  EXPECT_TRUE(cluster.ok()) << cluster.status().message();
  return std::move(cluster).value();
}

model::QueueTree RandomQueues(Rng& rng, std::int64_t gpu_milli, std::vector<model::QueueId>& leaves) {
  std::vector<model::QueueSpec> specs;
  const int orgs = static_cast<int>(rng.Uniform(1, 3));
  for (int o = 0; o < orgs; ++o) {
    const std::int64_t org_share = gpu_milli / orgs;
    specs.push_back({"org" + std::to_string(o), org_share,
                     rng.Bernoulli(0.3) ? org_share + gpu_milli / 4 : model::kUnlimited, 1.0 + static_cast<double>(o)});
    const int teams = static_cast<int>(rng.Uniform(1, 3));
    for (int t = 0; t < teams; ++t) {
      specs.push_back({"org" + std::to_string(o) + "/t" + std::to_string(t), org_share / teams, model::kUnlimited, 1.0});
    }
  }
  auto tree = model::QueueTree::Build(specs);
  EXPECT_TRUE(tree.ok()) << tree.status().message();
  for (const model::Queue& q : tree->queues()) {
    if (q.children.empty() && q.id != tree->root()) leaves.push_back(q.id);
  }
  return std::move(tree).value();
}

Job RandomJob(Rng& rng, const std::vector<model::QueueId>& leaves, int serial) {
  Job job;
  job.name = "j" + std::to_string(serial);
  job.queue = leaves[static_cast<std::size_t>(rng.Uniform(0, static_cast<std::int64_t>(leaves.size()) - 1))];
  job.priority = static_cast<std::int32_t>(rng.Uniform(0, 3) * 10);
  job.preemptible = !rng.Bernoulli(0.15);
  job.walltime = rng.Bernoulli(0.8) ? rng.Uniform(60, 7200) : 0;
  job.checkpoint_interval = rng.Bernoulli(0.5) ? 600 : 0;
  job.oracle_duration = rng.Uniform(60, 7200);
  const int groups = rng.Bernoulli(0.15) ? 2 : 1;
  for (int g = 0; g < groups; ++g) {
    model::TaskGroup group;
    group.name = "g" + std::to_string(g);
    const double kind = rng.UniformReal();
    model::TaskRequest& r = group.request;
    if (kind < 0.25) {
      r.gpu_milli = rng.Uniform(1, 3) * 250;
      r.gpu_memory = rng.Uniform(1, 30) << 30;
    } else if (kind < 0.95) {
      r.gpu_milli = rng.Uniform(1, 4) * 1000;
    }  // else CPU only
    r.cpu_milli = rng.Uniform(0, 8) * 1000;
    r.memory = rng.Uniform(0, 32) << 30;
    if (rng.Bernoulli(0.1)) r.gpu_model = rng.Bernoulli(0.5) ? "A100" : "H100";
    group.replicas = static_cast<std::int32_t>(rng.Uniform(1, 4));
    group.min_replicas = static_cast<std::int32_t>(rng.Uniform(1, group.replicas));
    job.groups.push_back(group);
  }
  if (rng.Bernoulli(0.4)) job.topology = {static_cast<TopologyLevel>(rng.Uniform(0, 4)), rng.Bernoulli(0.5)};
  return job;
}

// All GPUs of the job's tasks inside one domain of its required level.
bool WithinRequiredDomain(const Job& job, const model::Cluster& cluster) {
  if (!job.topology.required || job.topology.level == TopologyLevel::kCluster) return true;
  std::set<std::int64_t> domains;
  for (const model::TaskPlacement& t : job.placements) {
    if (job.topology.level == TopologyLevel::kNvlink) {
      // A CPU-only task has no NVLink domain to share.
      for (const model::GpuShare& s : t.gpus) domains.insert(cluster.gpu(s.gpu).nvlink.value());
    } else {
      domains.insert(cluster.GroupOf(t.node, job.topology.level));
    }
  }
  return domains.size() <= 1;
}

std::string Describe(const Job& job) {
  std::string text = job.name + " (required " + std::string(model::ToString(job.topology.level)) + "):";
  for (const model::TaskPlacement& t : job.placements) {
    text += " node " + std::to_string(t.node.value()) + " gpus[";
    for (const model::GpuShare& s : t.gpus) text += std::to_string(s.gpu.value()) + " ";
    text += "]";
  }
  return text;
}

class PropertyRun {
 public:
  explicit PropertyRun(std::uint64_t seed) : rng_(seed), seed_(seed) {
    model::Cluster cluster = RandomCluster(rng_);
    model::QueueTree queues = RandomQueues(rng_, cluster.capacity().gpu_milli, leaves_);
    state_ = std::make_unique<SchedulerState>(std::move(cluster), std::move(queues));
    SchedulerConfig config;
    static const char* const kOrders[] = {"fifo", "shortest-first", "las", "oracle-srtf"};
    config.job_order = kOrders[rng_.Uniform(0, 3)];
    config.preempt_by_job_order = rng_.Bernoulli(0.5);
    config.plugin_args.las.thresholds = {600.0, 6000.0};
    config.reservation = rng_.Bernoulli(0.8) ? "easy-backfill" : "none";
    if (config.reservation == "none") config.actions = {"allocate", "reclaim", "preempt"};
    config.fair_share_half_life = rng_.Bernoulli(0.5) ? 3600 : 0;
    scheduler_ = std::make_unique<Scheduler>(std::move(Scheduler::Create(config)).value());
  }

  void Step(int serial) {
    now_ += rng_.Uniform(1, 300);
    const double event = rng_.UniformReal();
    const auto& running = state_->jobs().running();
    const auto random_running = [&] {
      return running[static_cast<std::size_t>(rng_.Uniform(0, static_cast<std::int64_t>(running.size()) - 1))];
    };
    const model::Cluster& cluster = state_->cluster();
    if (event < 0.45) {
      for (int i = static_cast<int>(rng_.Uniform(1, 4)); i > 0; --i) {
        state_->Submit(RandomJob(rng_, leaves_, serial * 10 + i), now_);
      }
    } else if (event < 0.75 && !running.empty()) {
      state_->Finish(random_running(), rng_.Bernoulli(0.9) ? JobState::kSucceeded : JobState::kFailed, now_);
    } else if (event < 0.82) {
      const auto gpu = model::GpuId(static_cast<std::int32_t>(rng_.Uniform(0, static_cast<std::int64_t>(cluster.gpus().size()) - 1)));
      const bool healthy = !cluster.gpu(gpu).healthy;  // flip
      for (JobId id : state_->SetGpuHealthy(gpu, healthy)) static_cast<void>(state_->Requeue(id, now_));
    } else if (event < 0.87) {
      const auto node = model::NodeId(static_cast<std::int32_t>(rng_.Uniform(0, static_cast<std::int64_t>(cluster.nodes().size()) - 1)));
      state_->cluster().SetSchedulable(node, !cluster.node(node).schedulable);
    } else if (event < 0.92 && !running.empty()) {
      state_->Checkpointed(random_running(), now_);
    } else if (!state_->jobs().pending().empty()) {
      const auto& pending = state_->jobs().pending();
      state_->Finish(pending[static_cast<std::size_t>(rng_.Uniform(0, static_cast<std::int64_t>(pending.size()) - 1))],
                     JobState::kCancelled, now_);
    }
    Cycle();
  }

  int cycles() const { return cycles_; }
  std::int64_t placed() const { return placed_; }
  std::int64_t evicted() const { return evicted_; }

 private:
  void Cycle() {
    NullBinder binder;
    const CycleResult result = scheduler_->RunCycle(*state_, now_, binder);
    ++cycles_;
    placed_ += result.placed;
    evicted_ += static_cast<std::int64_t>(result.evictions.size());
    const std::string where = "seed " + std::to_string(seed_) + ", cycle " + std::to_string(cycles_) + ": ";
    for (const std::string& problem : model::CheckInvariants(state_->cluster(), state_->jobs().all(), state_->queues())) {
      ADD_FAILURE() << where << problem;
    }
    std::set<JobId> placed_now;
    for (const Outcome& o : result.outcomes) {
      const Job& job = state_->job(o.job);
      if (o.verdict == Verdict::kPlaced) placed_now.insert(o.job);
      if (o.verdict == Verdict::kNever) {
        EXPECT_EQ(job.state, JobState::kPending) << where << job.name;
      }
    }
    for (const Eviction& e : result.evictions) {
      const Job& victim = state_->job(e.victim);
      EXPECT_TRUE(victim.preemptible) << where << "evicted non-preemptible " << victim.name;
      EXPECT_EQ(victim.state, JobState::kPending) << where << victim.name;
      EXPECT_FALSE(placed_now.contains(e.victim) && victim.state == JobState::kPending && victim.start_time == now_)
          << where << victim.name << " was bound and evicted in one cycle";
      EXPECT_EQ(state_->job(e.preemptor).state, JobState::kRunning) << where << "evicted for a preemptor that did not start";
    }
    for (JobId id : placed_now) {
      const Job& job = state_->job(id);
      EXPECT_EQ(job.state, JobState::kRunning) << where << job.name << " reported placed but not running";
    }
    for (JobId id : state_->jobs().running()) {
      EXPECT_TRUE(WithinRequiredDomain(state_->job(id), state_->cluster())) << where << Describe(state_->job(id));
    }
  }

  Rng rng_;
  std::uint64_t seed_;
  std::vector<model::QueueId> leaves_;
  std::unique_ptr<SchedulerState> state_;
  std::unique_ptr<Scheduler> scheduler_;
  Time now_ = 0;
  int cycles_ = 0;
  std::int64_t placed_ = 0, evicted_ = 0;
};

TEST(SchedulerPropertyTest, InvariantsHoldUnderRandomEvents) {
  int cycles = 0;
  std::int64_t placed = 0, evicted = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    PropertyRun run(seed);
    for (int step = 0; step < 100; ++step) {
      run.Step(step);
      if (::testing::Test::HasFailure()) return;  // the first broken cycle says the most
    }
    cycles += run.cycles();
    placed += run.placed();
    evicted += run.evicted();
  }
  // The run must exercise the interesting paths, or it proves little.
  EXPECT_EQ(cycles, 6000);
  EXPECT_GT(placed, 3000);
  EXPECT_GT(evicted, 20);
  std::printf("cycles %d, placements %lld, evictions %lld\n", cycles, static_cast<long long>(placed),
              static_cast<long long>(evicted));
}

}  // namespace
}  // namespace tessera::sched
