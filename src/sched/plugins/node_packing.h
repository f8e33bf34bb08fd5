// Placement policies that choose a node and GPUs task by task over the whole
// cluster, for packing studies (the FGD paper's protocol):
//
// random: a uniformly random feasible node (and, for a fraction, a random
// GPU with room on it). A baseline: what placement without a policy gives.
//
// fgd: fragmentation gradient descent (Weng et al., "Beware of
// Fragmentation", ATC'23). Assumption: the cluster will keep receiving tasks
// like those of `workload` (classes of GPU demand with their shares). A
// node's fragmentation for a class is the free GPU capacity that a task of
// that class could not use there: all of it if the task does not fit on the
// node at all, else the free share of GPUs too small for it (for a fraction)
// or of partly used GPUs (for whole GPUs). Weighted over the classes, that is
// the node's expected fragmentation. Each task goes where placing it
// increases fragmentation least (ties: the node with fewer free GPUs).
// Cost: every node, every candidate GPU, every class: O(nodes x GPUs x
// classes) per task; meant for simulations, not the 25,000-GPU hot path.
//
// Both place tasks one by one (a gang's tasks anywhere) and leave gangs with a
// required topology, or a group placed one task per node, to topology-packing,
// so no constraint is ever broken.
#pragma once

#include <memory>
#include <vector>

#include "base/random.h"
#include "sched/extension_points.h"

namespace tessera::sched {

// random's argument (pluginArgs.random): the seed of its choices.
struct RandomArgs {
  std::uint64_t seed = 1;
};

// One kind of task in the workload a cluster expects, with its share of the
// arrivals: what fgd packs for.
struct TaskClass {
  std::int64_t gpu_milli = 0;  // per task: a fraction, or whole GPUs x 1000
  std::int64_t cpu_milli = 0;
  std::int64_t memory = 0;
  double weight = 1.0;
};

// fgd's argument (pluginArgs.fgd): the expected task mix.
struct FgdArgs {
  std::vector<TaskClass> workload;
};

class NodePacking : public Placement {
 public:
  explicit NodePacking(std::unique_ptr<Placement> for_constrained_gangs) : constrained_(std::move(for_constrained_gangs)) {}
  PlaceVerdict Place(const model::Job& job, model::Cluster& cluster, const PlaceOptions& options,
                     std::vector<model::TaskPlacement>& out) final;

 protected:
  struct Choice {
    model::NodeId node;
    std::uint64_t gpus = 0;  // local GPU bits: whole GPUs, or the one GPU a fraction shares
  };
  // The node and GPUs for one task, or an invalid node when nothing fits.
  virtual Choice Choose(const model::TaskRequest& request, const model::Cluster& cluster, const PlaceOptions& options) = 0;
  static bool Usable(const model::Node& node, const model::TaskRequest& r, const model::Cluster& cluster,
                     const PlaceOptions& options);

 private:
  std::unique_ptr<Placement> constrained_;
};

class RandomPlacement final : public NodePacking {
 public:
  RandomPlacement(std::uint64_t seed, std::unique_ptr<Placement> for_constrained_gangs)
      : NodePacking(std::move(for_constrained_gangs)), rng_(seed) {}

 private:
  Choice Choose(const model::TaskRequest& request, const model::Cluster& cluster, const PlaceOptions& options) override;
  Rng rng_;
};

class FgdPlacement final : public NodePacking {
 public:
  FgdPlacement(std::vector<TaskClass> workload, std::unique_ptr<Placement> for_constrained_gangs);

 private:
  Choice Choose(const model::TaskRequest& request, const model::Cluster& cluster, const PlaceOptions& options) override;
  std::vector<TaskClass> workload_;
};

}  // namespace tessera::sched
