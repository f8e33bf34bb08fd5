#include "controlplane/event_log.h"

#include <algorithm>

namespace tessera::controlplane {

nlohmann::json ToJson(const Event& event) {
  nlohmann::json j = {{"revision", event.revision}, {"time", event.time_ms}, {"type", event.type}, {"message", event.message}};
  if (event.job >= 0) j["job"] = event.job;
  if (!event.node.empty()) j["node"] = event.node;
  return j;
}

Event EventFromJson(const nlohmann::json& value) {
  Event event;
  event.revision = value.value("revision", std::int64_t{0});
  event.time_ms = value.value("time", std::int64_t{0});
  event.type = value.value("type", std::string());
  event.job = value.value("job", std::int64_t{-1});
  event.node = value.value("node", std::string());
  event.message = value.value("message", std::string());
  return event;
}

bool EventFilter::Matches(const Event& event) const {
  if (job >= 0 && event.job != job) return false;
  if (!node.empty() && event.node != node) return false;
  if (kind == "job" && !event.type.starts_with("Job")) return false;
  if (kind == "node" && !event.type.starts_with("Node") && !event.type.starts_with("Gpu")) return false;
  if (job_visible && event.job >= 0 && !job_visible(event.job)) return false;
  return true;
}

const Event& EventLog::Append(Event event) {
  event.revision = ++last_revision_;
  events_.push_back(std::move(event));
  if (events_.size() > capacity_) events_.pop_front();
  return events_.back();
}

void EventLog::Restore(Event event) {
  last_revision_ = std::max(last_revision_, event.revision);
  events_.push_back(std::move(event));
  if (events_.size() > capacity_) events_.pop_front();
}

std::vector<Event> EventLog::Since(std::int64_t revision, const EventFilter& filter, std::size_t limit) const {
  std::vector<Event> out;
  // Revisions are dense within the window: jump to the first one after `revision`.
  const std::int64_t first = first_revision();
  std::size_t start = revision < first ? 0 : static_cast<std::size_t>(revision - first + 1);
  for (std::size_t i = start; i < events_.size() && out.size() < limit; ++i) {
    if (filter.Matches(events_[i])) out.push_back(events_[i]);
  }
  return out;
}

}  // namespace tessera::controlplane
