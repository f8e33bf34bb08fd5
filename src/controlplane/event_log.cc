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

void EventLog::Add(Event event) {
  if (event.job >= 0) by_job_[event.job].push_back(event.revision);
  events_.push_back(std::move(event));
  if (events_.size() <= capacity_) return;
  const Event& oldest = events_.front();
  if (oldest.job >= 0) {
    // The oldest event in the window is its job's oldest too.
    auto it = by_job_.find(oldest.job);
    it->second.pop_front();
    if (it->second.empty()) by_job_.erase(it);
  }
  events_.pop_front();
}

const Event& EventLog::Append(Event event) {
  event.revision = ++last_revision_;
  Add(std::move(event));
  return events_.back();
}

void EventLog::Restore(Event event) {
  last_revision_ = std::max(last_revision_, event.revision);
  Add(std::move(event));
}

std::vector<Event> EventLog::Since(std::int64_t revision, const EventFilter& filter, std::size_t limit) const {
  // Revisions ascend through the window (with gaps where recovery set a damaged event aside).
  const auto at = [this](std::int64_t r) {
    return std::lower_bound(events_.begin(), events_.end(), r, [](const Event& e, std::int64_t v) { return e.revision < v; });
  };
  std::vector<Event> out;
  if (revision >= last_revision_) return out;
  if (filter.job >= 0) {
    const auto it = by_job_.find(filter.job);
    if (it == by_job_.end()) return out;
    for (auto r = std::upper_bound(it->second.begin(), it->second.end(), revision); r != it->second.end() && out.size() < limit; ++r) {
      const Event& event = *at(*r);
      if (filter.Matches(event)) out.push_back(event);
    }
    return out;
  }
  for (auto e = at(revision + 1); e != events_.end() && out.size() < limit; ++e) {
    if (filter.Matches(*e)) out.push_back(*e);
  }
  return out;
}

}  // namespace tessera::controlplane
