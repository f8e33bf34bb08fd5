// A gang whose task group names a GPU model that no node has can never be
// placed. SchedulerState judges that when the job arrives, but a placement
// must not read the unresolved model set (0, "any model") as a licence to
// use any GPU: it answers never, naming the model, itself.
#pragma once

#include <optional>

#include "sched/extension_points.h"

namespace tessera::sched {

inline std::optional<PlaceVerdict> NeverForUnknownGpuModel(const model::Job& job, const model::Cluster& cluster) {
  for (const model::TaskGroup& group : job.groups) {
    const model::TaskRequest& r = group.request;
    if (!r.gpu_model.empty() && r.models == 0) {
      return PlaceVerdict::Never("task group '" + group.name + "': " + cluster.ResolveModels(r.gpu_model).status().message());
    }
  }
  return std::nullopt;
}

}  // namespace tessera::sched
