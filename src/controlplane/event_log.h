// Every decision and state change of the control plane as an event with a
// revision number: what `tessera describe` shows, what watchers follow
// (GET /v1/events?since=REV&wait=S) and what the store keeps a window of.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace tessera::controlplane {

struct Event {
  std::int64_t revision = 0;
  std::int64_t time_ms = 0;
  std::string type;     // "JobSubmitted", "JobScheduled", "NodeLost", ...
  std::int64_t job = -1;  // the job it is about, or -1
  std::string node;     // the node it is about, or empty
  std::string message;
};

nlohmann::json ToJson(const Event& event);
// The stored form is the API's: ToJson; EventFromJson refuses anything else,
// naming the field ("time: expected an integer").
Result<Event> EventFromJson(const nlohmann::json& value);

struct EventFilter {
  std::int64_t job = -1;    // only this job's events
  std::string node;         // only this node's events
  std::string kind;         // "job" (Job*) or "node" (Node*, and Gpu* of its GPUs): only events of that kind of object
  std::function<bool(std::int64_t job)> job_visible;  // a job event shows only when true (the caller may see that job)
  bool Matches(const Event& event) const;
};

// A window of the latest `capacity` events in memory.
class EventLog {
 public:
  explicit EventLog(std::size_t capacity) : capacity_(capacity) {}
  // Assigns the next revision; returns the stored event.
  const Event& Append(Event event);
  // Restores events read back from the store (in revision order).
  void Restore(Event event);
  std::vector<Event> Since(std::int64_t revision, const EventFilter& filter, std::size_t limit) const;
  std::int64_t last_revision() const { return last_revision_; }
  // The oldest revision still held; older ones are gone (a watcher must relist).
  std::int64_t first_revision() const { return events_.empty() ? last_revision_ + 1 : events_.front().revision; }

 private:
  void Add(Event event);  // appends and keeps the window and the index
  std::size_t capacity_;
  std::deque<Event> events_;
  std::int64_t last_revision_ = 0;
  // The revisions of each job's events in the window, oldest first: a job's
  // events (GET /v1/jobs/ID, describe) without a walk of the whole window.
  std::unordered_map<std::int64_t, std::deque<std::int64_t>> by_job_;
};

}  // namespace tessera::controlplane
