#include "model/task_container.h"

namespace tessera::model {

std::string_view ToString(PullPolicy policy) {
  switch (policy) {
    case PullPolicy::kAlways: return "Always";
    case PullPolicy::kNever: return "Never";
    case PullPolicy::kIfNotPresent: break;
  }
  return "IfNotPresent";
}

std::optional<PullPolicy> ParsePullPolicy(std::string_view name) {
  for (const PullPolicy policy : {PullPolicy::kIfNotPresent, PullPolicy::kAlways, PullPolicy::kNever}) {
    if (ToString(policy) == name) return policy;
  }
  return std::nullopt;
}

}  // namespace tessera::model
