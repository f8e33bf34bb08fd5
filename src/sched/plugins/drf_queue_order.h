// Fair share between queues, Dominant Resource Fairness style (Ghodsi et al.,
// NSDI'11; Mesos' DRF sorter).
//
// Assumption: GPUs, GPU memory, CPU and host memory are all contended, and a
// queue's claim is set by the resource it uses most relative to the cluster.
// Algorithm: a queue's key is its dominant share of the blended usage
// (half what it holds now, half its exponentially decayed average, so a queue
// that ran hot yesterday yields to one that did not), divided by its weight.
// Queues are compared level by level down the tree (siblings against
// siblings), so a team's users never outweigh another team.
// Why blend: current usage alone forgets history and lets bursty queues win;
// decayed usage alone reacts slowly within one cycle.
#pragma once

#include "sched/extension_points.h"

namespace tessera::sched {

class DrfQueueOrder final : public QueueOrder {
 public:
  double Share(const model::Queue& queue, const model::Resources& usage,
               const model::Resources& capacity) const override;
};

}  // namespace tessera::sched
