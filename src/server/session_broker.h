// Joins a user's interactive session (`tessera exec`, `attach`,
// `port-forward`) to its task's node. Agents open no port: each keeps a
// long poll here for the sessions of its node, and for each one opens a
// connection of its own back to the server. The user's request waits (as a
// long poll, holding no load slot) until that connection arrives; then both
// are answered 101 and spliced (net/tunnel.h), so the session's bytes travel
// inside the API's own TLS connections, authorised once, at the user's
// request. An agent that does not come within kAgentDeadline gets the user
// a 504 that names the node.
//
// Sessions live in the serving replica's memory only: a session is a pair of
// open connections, and it ends with them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "api/session_protocol.h"
#include "net/router.h"

namespace tessera::server {

class SessionBroker {
 public:
  static constexpr std::chrono::seconds kAgentDeadline{15};

  SessionBroker();
  // Answers every request still waiting (503) and stops.
  ~SessionBroker();
  SessionBroker(const SessionBroker&) = delete;
  SessionBroker& operator=(const SessionBroker&) = delete;

  // A user's request, authorised and located on `node`: held until its agent joins.
  void Open(const std::string& node, api::SessionRequest request, net::ExchangePtr user);
  // The agent's long poll: {"sessions": [...]}, the requests it has not been
  // given yet, at once when there are some, else when one comes or `wait` ends.
  void WaitRequests(const std::string& node, std::chrono::milliseconds wait, std::function<void(nlohmann::json)> done);
  // The agent's connection for session `id`: both sides get 101 and are spliced.
  void Join(const std::string& node, const std::string& id, const net::ExchangePtr& agent);
  std::size_t waiting() const;

 private:
  struct Waiting {
    std::string node;
    api::SessionRequest request;
    net::ExchangePtr user;
    std::chrono::steady_clock::time_point deadline;
    bool given = false;  // handed to the agent's poll
  };
  struct Poll {
    std::function<void(nlohmann::json)> done;
    std::chrono::steady_clock::time_point deadline;
  };
  // Under mu_: the node's requests not given yet, marked given.
  nlohmann::json TakeRequests(const std::string& node);
  void ExpireLoop();

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<std::string, Waiting> waiting_;  // by session id
  std::map<std::string, Poll> polls_;       // by node
  std::mt19937_64 random_{std::random_device{}()};
  std::thread expiry_;
};

}  // namespace tessera::server
