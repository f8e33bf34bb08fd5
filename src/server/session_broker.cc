#include "server/session_broker.h"

#include <cstdio>
#include <vector>

#include "net/client_tunnel.h"
#include "net/tunnel.h"
#include "server/http_answers.h"

namespace tessera::server {

using nlohmann::json;

namespace {

// The two upgraded connections of one session meet here, in whichever order
// their 101s are written. One whose 101 never got out (its client left)
// never arrives: the other is closed when the last of them lets go.
class Meeting {
 public:
  ~Meeting() {
    if (first_) first_->Close();
  }
  void Arrive(std::shared_ptr<net::Tunnel> tunnel) {
    std::shared_ptr<net::Tunnel> other;
    {
      std::lock_guard lock(mu_);
      if (!first_) {
        first_ = std::move(tunnel);
        return;
      }
      other = std::move(first_);
    }
    net::Splice(std::move(other), std::move(tunnel));
  }

 private:
  std::mutex mu_;
  std::shared_ptr<net::Tunnel> first_;
};

net::HttpResponse SwitchTo(const std::shared_ptr<Meeting>& meeting) {
  net::HttpResponse response;
  response.status = 101;
  response.content_type.clear();
  response.headers.emplace_back("Upgrade", net::kSessionProtocol);
  response.upgrade = [meeting](std::shared_ptr<net::Tunnel> tunnel) { meeting->Arrive(std::move(tunnel)); };
  return response;
}

}  // namespace

SessionBroker::SessionBroker() : expiry_([this] { ExpireLoop(); }) {}

SessionBroker::~SessionBroker() {
  std::vector<net::ExchangePtr> users;
  std::vector<std::function<void(json)>> polls;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (auto& [id, w] : waiting_) users.push_back(std::move(w.user));
    for (auto& [node, poll] : polls_) polls.push_back(std::move(poll.done));
    waiting_.clear();
    polls_.clear();
  }
  wake_.notify_all();
  expiry_.join();
  for (const net::ExchangePtr& user : users) user->Reply(net::ErrorResponse(503, "the server is stopping; the session was not opened"));
  for (auto& done : polls) done(json{{"sessions", json::array()}});
}

std::size_t SessionBroker::waiting() const {
  std::lock_guard lock(mu_);
  return waiting_.size();
}

void SessionBroker::Open(const std::string& node, api::SessionRequest request, net::ExchangePtr user) {
  user->Waiting();
  std::function<void(json)> poll;
  json given;
  {
    std::lock_guard lock(mu_);
    char id[24];
    std::snprintf(id, sizeof id, "s%016llx", static_cast<unsigned long long>(random_()));
    request.id = id;
    waiting_[id] = {node, std::move(request), std::move(user), std::chrono::steady_clock::now() + kAgentDeadline, false};
    if (auto it = polls_.find(node); it != polls_.end()) {
      poll = std::move(it->second.done);
      polls_.erase(it);
      given = TakeRequests(node);
    }
  }
  wake_.notify_all();
  if (poll) poll(std::move(given));
}

json SessionBroker::TakeRequests(const std::string& node) {
  json out = json::array();
  for (auto& [id, w] : waiting_) {
    if (w.node != node || w.given) continue;
    w.given = true;
    out.push_back(api::ToJson(w.request));
  }
  return json{{"sessions", std::move(out)}};
}

void SessionBroker::WaitRequests(const std::string& node, std::chrono::milliseconds wait, std::function<void(json)> done) {
  std::function<void(json)> replaced;
  json now;
  {
    std::lock_guard lock(mu_);
    now = TakeRequests(node);
    if (now["sessions"].empty() && wait.count() > 0) {
      // One poll per node: a newer one replaces an older (the agent reconnected).
      if (auto it = polls_.find(node); it != polls_.end()) replaced = std::move(it->second.done);
      polls_[node] = {std::move(done), std::chrono::steady_clock::now() + wait};
    }
  }
  wake_.notify_all();
  if (replaced) replaced(json{{"sessions", json::array()}});
  if (done) done(std::move(now));
}

void SessionBroker::Join(const std::string& node, const std::string& id, const net::ExchangePtr& agent) {
  net::ExchangePtr user;
  {
    std::lock_guard lock(mu_);
    auto it = waiting_.find(id);
    if (it == waiting_.end()) {
      return agent->Reply(StatusResponse(NotFound("no session " + id + " waits: its user left, or it waited over " +
                                                  std::to_string(kAgentDeadline.count()) + " s")));
    }
    if (it->second.node != node) return agent->Reply(StatusResponse(PermissionDenied("session " + id + " is not for node " + node)));
    user = std::move(it->second.user);
    waiting_.erase(it);
  }
  if (agent->request().Header("upgrade") != net::kSessionProtocol) {
    user->Reply(StatusResponse(Internal("the agent of node " + node + " did not switch protocols")));
    return agent->Reply(StatusResponse(InvalidArgument(std::string("this route switches protocols: send Upgrade: ") + net::kSessionProtocol)));
  }
  const auto meeting = std::make_shared<Meeting>();
  agent->Reply(SwitchTo(meeting));
  user->Reply(SwitchTo(meeting));
}

void SessionBroker::ExpireLoop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    auto next = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (const auto& [id, w] : waiting_) next = std::min(next, w.deadline);
    for (const auto& [node, poll] : polls_) next = std::min(next, poll.deadline);
    wake_.wait_until(lock, next);
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::pair<net::ExchangePtr, std::string>> late;
    std::vector<std::function<void(json)>> ended;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      if (it->second.deadline > now) {
        ++it;
        continue;
      }
      late.emplace_back(std::move(it->second.user), it->second.node);
      it = waiting_.erase(it);
    }
    for (auto it = polls_.begin(); it != polls_.end();) {
      if (it->second.deadline > now) {
        ++it;
        continue;
      }
      ended.push_back(std::move(it->second.done));
      it = polls_.erase(it);
    }
    lock.unlock();
    for (auto& [user, node] : late) {
      user->Reply(JsonResponse(504, {{"error", "the agent of node " + node + " did not open the session within " +
                                                   std::to_string(kAgentDeadline.count()) + " s; is it running and connected?"},
                                     {"code", 504}}));
    }
    for (auto& done : ended) done(json{{"sessions", json::array()}});
    lock.lock();
  }
}

}  // namespace tessera::server
