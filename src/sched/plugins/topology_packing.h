// Placement: gangs all-or-nothing, in the smallest topology domain that holds
// them, packed so that whole GPUs, whole nodes and whole leaves stay free.
//
// Assumptions
//   * Collective traffic dominates distributed training: a gang inside one
//     NVLink domain beats one inside a node, beats a leaf, beats a spine.
//   * Large gangs are the hardest to place, so free capacity should stay in
//     large contiguous blocks; small work should fill existing holes.
//
// Algorithm
//   * Domains are tried from the tightest upward: an NVLink domain inside a
//     node, the node, a rack-wide NVLink domain (NVL72), the leaf, the spine,
//     the cluster. A required constraint allows only the tiers inside its
//     level ("never place across it"). A preferred one, like no constraint,
//     tries every tier tightest first: the gang lands inside one domain of its
//     level whenever one can hold it, and is never kept waiting for it. Tiers
//     whose largest domain is smaller than the gang are skipped.
//   * At each level the candidate domains are ranked best-fit from the
//     per-group free-GPU histograms (the fullest domain that still holds the
//     gang first) and at most `max_domain_tries` are attempted.
//   * Inside a domain, tasks are placed largest first, each best-fit: the node
//     with the fewest free whole GPUs that still holds it, and on that node the
//     NVLink domain (then NUMA socket) with the fewest free GPUs that holds it.
//     Every task is applied to the cluster tentatively so the next one sees it;
//     a gang that does not fit is undone completely.
//   * A task that runs from an image prefers, between nodes that fit it
//     equally well, one that holds the image (a pull saved): a tie-break, so
//     it never costs a tighter domain or a better fit and never makes a task
//     wait. Among the nodes of one bucket it looks at most kImageScanLimit
//     past the first that fits.
//   * A fraction of a GPU goes best-fit onto an already shared GPU (fewest free
//     milli-GPUs that still hold it, enough free memory); only when none fits
//     does it open a whole GPU, on the node with the fewest free GPUs. So
//     fractions never scatter over otherwise empty GPUs and nodes.
//   * A group marked onePerNode (a Slurm allocation: one task per node) never
//     has two tasks on one node: a node holding one of its tasks is not
//     usable for the next, so such a gang skips the single-node tiers.
//   * Minimum members of every group are placed first; optional members
//     (replicas above minReplicas) are added afterwards where they fit.
//
// Costs: a single-GPU task is a bucket lookup (O(1) in the common case); a
// fraction an ordered-set lookup (O(log n)); ranking a level's domains reads
// one histogram per domain.
#pragma once

#include "sched/extension_points.h"

namespace tessera::sched {

class TopologyPacking final : public Placement {
 public:
  explicit TopologyPacking(int max_domain_tries) : max_domain_tries_(max_domain_tries) {}
  PlaceVerdict Place(const model::Job& job, model::Cluster& cluster, const PlaceOptions& options,
                     std::vector<model::TaskPlacement>& out) override;

 private:
  int max_domain_tries_;
};

}  // namespace tessera::sched
