#include "controlplane/records.h"

#include <algorithm>

namespace tessera::controlplane {

void StartInSubmitDir(model::Job& job, const std::string& submit_dir) {
  for (model::TaskGroup& group : job.groups) {
    if (group.working_dir.empty() && !group.container.enabled()) group.working_dir = submit_dir;
  }
}

std::string_view ApiState(model::JobState state, bool all_tasks_running) {
  switch (state) {
    case model::JobState::kPending: return "pending";
    case model::JobState::kRunning: return all_tasks_running ? "running" : "starting";
    case model::JobState::kSucceeded: return "succeeded";
    case model::JobState::kFailed: return "failed";
    case model::JobState::kCancelled: return "cancelled";
  }
  return "?";
}

std::string_view ArrayApiState(const model::Job& parent) {
  switch (parent.state) {
    case model::JobState::kPending:
    case model::JobState::kRunning:
      return parent.array_progress[model::JobState::kRunning] > 0 ? "running" : "pending";
    default: return ApiState(parent.state, false);
  }
}

std::string_view ToString(TaskState state) {
  switch (state) {
    case TaskState::kAssigned: return "assigned";
    case TaskState::kRunning: return "running";
    case TaskState::kExited: return "exited";
  }
  return "?";
}

std::vector<std::uint64_t> ImageKeys(const std::vector<api::CachedImageReport>& images) {
  std::vector<std::uint64_t> keys;
  for (const api::CachedImageReport& image : images) {
    for (const std::string& reference : image.references) keys.push_back(model::ImageKey(reference));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::string_view ToString(NodeState state) {
  switch (state) {
    case NodeState::kReady: return "ready";
    case NodeState::kLost: return "lost";
  }
  return "?";
}

}  // namespace tessera::controlplane
