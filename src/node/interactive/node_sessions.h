// The agent's side of interactive sessions (api/session_protocol.h). A long
// poll asks the server for this node's session requests; each gets a thread
// that opens its own upgraded connection back to the server
// (server/session_broker.h) and then
//   exec:          runs a command beside the task -- its environment, working
//                  directory and cgroup -- on a terminal or on pipes;
//   attach:        joins an interactive task's terminal (task_terminal.h), or
//                  follows a batch task's output as it is written;
//   port-forward:  connects to a port on this node (127.0.0.1), where the
//                  task listens (the host network).
// A session ends when its process, task or socket does, or when its user
// leaves: an exec'd process then gets SIGHUP, as a terminal's would.
#pragma once

#include <atomic>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/agent_protocol.h"
#include "api/session_protocol.h"
#include "net/http_client.h"
#include "net/tls.h"
#include "node/interactive/task_terminal.h"
#include "node/launch/task_process.h"

namespace tessera::node {

// What a session needs of a running task.
struct SessionTarget {
  LaunchSpec spec;                         // how it was launched: exec runs with its environment and directory
  std::vector<std::string> cgroup;         // its group's cgroup.procs files; empty: none
  std::string log_base;                    // <log_base>.stdout and .stderr
  std::shared_ptr<TaskTerminal> terminal;  // an interactive task's; null: a batch task
  // A container task's: the command that runs `command` inside the container
  // (`runc exec`), on a terminal or not; empty: exec runs beside the task.
  std::function<std::vector<std::string>(bool tty, const std::vector<std::string>& command)> exec_inside{};
};

struct NodeSessionsOptions {
  std::string node;
  std::vector<net::Endpoint> servers;
  net::TlsContext tls;
  std::function<std::string()> token;  // the node's credential, as it is now ("" without access control)
};

class NodeSessions {
 public:
  explicit NodeSessions(NodeSessionsOptions options) : options_(std::move(options)) {}
  // Ends every session and waits for their threads.
  ~NodeSessions();
  NodeSessions(const NodeSessions&) = delete;
  NodeSessions& operator=(const NodeSessions&) = delete;

  // Polls for session requests until `stop`; call it on a thread of its own.
  void Run(const std::atomic<bool>& stop);
  // The agent's loop says which tasks run: a session reaches only those.
  void Publish(const api::TaskKey& key, SessionTarget target);
  void Withdraw(const api::TaskKey& key);

 private:
  struct Live;
  void Serve(std::shared_ptr<Live> live, const net::Endpoint& server);
  std::shared_ptr<const SessionTarget> Find(const api::TaskKey& key) const;
  bool Running(const api::TaskKey& key) const { return Find(key) != nullptr; }

  NodeSessionsOptions options_;
  mutable std::mutex mu_;
  std::map<api::TaskKey, std::shared_ptr<const SessionTarget>> targets_;
  std::list<std::shared_ptr<Live>> live_;  // sessions being served, ended ones reaped by Run
};

}  // namespace tessera::node
