#include "bench/virtual_agents.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

namespace tessera::bench {

namespace asio = boost::asio;
using nlohmann::json;

VirtualAgent::VirtualAgent(asio::io_context& io, const net::Endpoint& server, const VirtualAgentOptions& options, LoadCounters& counters,
                           net::TlsContext tls)
    : io_(io), poll_(io, server, tls), status_(io, server, tls),
      task_time_(std::chrono::milliseconds(static_cast<std::int64_t>(options.task_seconds * 1000))), telemetry_(options.telemetry),
      heartbeat_(io), counters_(counters) {
  inventory_.name = "hollow-" + std::to_string(options.index);
  inventory_.address = "127.0.0.1";
  inventory_.leaf = "leaf-" + std::to_string(options.index / 32);
  inventory_.spine = "spine-" + std::to_string(options.index / 512);
  inventory_.provider = "hollow";
  inventory_.cpu_milli = 128'000;
  inventory_.memory = std::int64_t{1} << 40;
  for (int g = 0; g < options.gpus; ++g) {
    inventory_.gpus.push_back({g, "", "H100", std::int64_t{80} << 30, g * 2 / std::max(options.gpus, 1), 0, true});
  }
}

void VirtualAgent::Start() {
  status_.Send("POST", "/v1/nodes/" + inventory_.name + "/register", api::ToJson(inventory_).dump(),
               [self = shared_from_this()](int status, std::string body) {
                 if (status != 200) {
                   self->counters_.error = "register: " + std::to_string(status) + " " + body;
                   return;
                 }
                 ++self->counters_.registered;
                 self->Poll();
                 self->Heartbeat();
               });
}

void VirtualAgent::Poll() {
  poll_.Send("GET", "/v1/nodes/" + inventory_.name + "/assignments?after=" + std::to_string(revision_) + "&wait=30", {},
             [self = shared_from_this()](int status, std::string body) { self->OnAssignments(status, body); });
}

void VirtualAgent::OnAssignments(int status, const std::string& body) {
  if (status != 200) {
    counters_.error = "assignments: " + std::to_string(status) + " " + body;
    return;
  }
  Result<api::AssignmentSet> set = api::AssignmentSetFromJson(json::parse(body));
  if (!set.ok()) {
    counters_.error = set.status().message();
    return;
  }
  revision_ = set->revision;
  std::set<api::TaskKey> listed;
  bool changed = false;
  const Clock::time_point now = Clock::now();
  for (const api::Assignment& a : set->tasks) {
    listed.insert(a.key);
    if (tasks_.contains(a.key)) continue;
    tasks_[a.key] = {false, a.gpus};
    counters_.started_at.try_emplace(a.key.job, now);
    changed = true;
    auto timer = std::make_shared<asio::steady_timer>(io_, task_time_);
    timer->async_wait([self = shared_from_this(), key = a.key, timer](boost::system::error_code) {
      auto it = self->tasks_.find(key);
      if (it == self->tasks_.end()) return;
      it->second.exited = true;
      self->Report();
    });
  }
  // Tasks the server no longer lists have ended there.
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    if (listed.contains(it->first)) {
      ++it;
      continue;
    }
    if (it->second.exited) ++counters_.completed;
    it = tasks_.erase(it);
  }
  if (changed) Report();
  Poll();
}

void VirtualAgent::Report() {
  if (reporting_) {
    report_again_ = true;
    return;
  }
  reporting_ = true;
  api::StatusReport report;
  for (const auto& [key, task] : tasks_) report.tasks.push_back({key, task.exited, 0, {}, false});
  if (telemetry_) {
    std::vector<double> utilization(inventory_.gpus.size(), 0.0);
    for (const auto& [key, task] : tasks_) {
      for (const std::int32_t g : task.gpus) {
        if (!task.exited && g >= 0 && static_cast<std::size_t>(g) < utilization.size()) utilization[g] = key.job % 5 == 0 ? 0 : 90;
      }
    }
    for (std::size_t g = 0; g < utilization.size(); ++g) report.gpus.push_back({static_cast<std::int32_t>(g), utilization[g], 0});
  }
  status_.Send("POST", "/v1/nodes/" + inventory_.name + "/status", api::ToJson(report).dump(),
               [self = shared_from_this()](int status, std::string body) {
                 self->reporting_ = false;
                 if (status != 200) self->counters_.error = "status: " + std::to_string(status) + " " + body;
                 if (std::exchange(self->report_again_, false)) self->Report();
               });
}

void VirtualAgent::Heartbeat() {
  heartbeat_.expires_after(std::chrono::seconds(10));
  heartbeat_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (ec) return;
    self->Report();
    self->Heartbeat();
  });
}

Submitter::Submitter(asio::io_context& io, const net::Endpoint& server, SubmitSchedule& schedule,
                     std::function<double(std::int64_t)> gpus_of, LoadCounters& counters, std::function<void()> on_done,
                     net::TlsContext tls)
    : conn_(io, server, std::move(tls)), due_timer_(io), schedule_(schedule), gpus_of_(std::move(gpus_of)), counters_(counters),
      on_done_(std::move(on_done)) {}

void Submitter::Start() {
  if (schedule_.next >= schedule_.total) return;
  const std::int64_t n = schedule_.next++;
  const Clock::time_point now = Clock::now();
  if (schedule_.rate <= 0) return Send(n, now);
  const auto due = schedule_.start + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(static_cast<double>(n) / schedule_.rate));
  if (due <= now) return Send(n, due);
  due_timer_.expires_at(due);
  due_timer_.async_wait([self = shared_from_this(), n, due](boost::system::error_code) { self->Send(n, due); });
}

void Submitter::Send(std::int64_t n, Clock::time_point due) {
  const json job = {{"apiVersion", "tessera/v1"},
                    {"kind", "Job"},
                    {"metadata", {{"name", "bench-" + std::to_string(n)}}},
                    {"spec", {{"tasks", {{{"name", "t"}, {"command", {"sleep", "1"}}, {"resources", {{"gpus", gpus_of_(n)}}}}}}}}};
  conn_.Send("POST", "/v1/jobs", job.dump(), [self = shared_from_this(), due](int status, std::string body) {
    if (status != 201) {
      self->counters_.error = "submit: " + std::to_string(status) + " " + body;
      return;
    }
    const std::int64_t id = json::parse(body)["jobs"][0]["id"];
    self->counters_.submitted_at[id] = due;
    if (++self->counters_.accepted == self->schedule_.total) self->on_done_();
    self->Start();
  });
}

}  // namespace tessera::bench
