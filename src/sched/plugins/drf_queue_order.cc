#include "sched/plugins/drf_queue_order.h"

namespace tessera::sched {

double DrfQueueOrder::Share(const model::Queue& queue, const model::Resources& usage,
                            const model::Resources& capacity) const {
  const model::Resources blended{(usage.gpu_milli + queue.usage_average.gpu_milli) / 2,
                                 (usage.gpu_memory + queue.usage_average.gpu_memory) / 2,
                                 (usage.cpu_milli + queue.usage_average.cpu_milli) / 2,
                                 (usage.memory + queue.usage_average.memory) / 2};
  return blended.DominantShare(capacity) / queue.weight;
}

}  // namespace tessera::sched
