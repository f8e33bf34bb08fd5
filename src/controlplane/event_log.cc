#include "controlplane/event_log.h"

#include <algorithm>
#include <limits>

#include "api/json_reader.h"

namespace tessera::controlplane {

nlohmann::json ToJson(const Event& event) {
  nlohmann::json j = {{"revision", event.revision}, {"time", event.time_ms}, {"type", event.type}, {"message", event.message}};
  if (event.job >= 0) j["job"] = event.job;
  if (!event.node.empty()) j["node"] = event.node;
  return j;
}

Result<Event> EventFromJson(const nlohmann::json& value) {
  Result<api::JsonObject> o = api::JsonObject::Read(value, "", {"revision", "time", "type", "message", "job", "node"},
                                                    {"revision", "time", "type", "message"});
  if (!o.ok()) return o.status();
  Event event;
  TESSERA_RETURN_IF_ERROR(o->ReadInt("revision", &event.revision, 1, std::numeric_limits<std::int64_t>::max()));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("time", &event.time_ms, 0, std::numeric_limits<std::int64_t>::max()));
  TESSERA_RETURN_IF_ERROR(o->ReadString("type", &event.type));
  TESSERA_RETURN_IF_ERROR(o->ReadString("message", &event.message));
  TESSERA_RETURN_IF_ERROR(o->ReadInt("job", &event.job, 0, std::numeric_limits<std::int64_t>::max()));
  TESSERA_RETURN_IF_ERROR(o->ReadString("node", &event.node));
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
