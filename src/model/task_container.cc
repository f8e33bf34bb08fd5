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

std::uint64_t ImageKey(std::string_view canonical_reference) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : canonical_reference) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash == 0 ? 1 : hash;
}

std::optional<PullPolicy> ParsePullPolicy(std::string_view name) {
  for (const PullPolicy policy : {PullPolicy::kIfNotPresent, PullPolicy::kAlways, PullPolicy::kNever}) {
    if (ToString(policy) == name) return policy;
  }
  return std::nullopt;
}

}  // namespace tessera::model
