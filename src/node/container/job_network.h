// spec.network: isolated on the node (docs/containers.md): the containers of
// one run on this node share a network namespace of their own, and the
// run's namespaces on its other nodes are joined by a VXLAN overlay that
// carries that run alone. Nothing else reaches in: the namespace has no
// route to the node, and the overlay's identifier (vni) is the run's.
//
// On the node, for run (job, attempt):
//   netns  tsr-<node>-<job>-<attempt>   loopback up; with more than one node
//          also the run's VXLAN device, addressed kOverlayBase + 1 + the
//          node's index in the run (rank 0's node is index 0, so
//          MASTER_ADDR inside is always the first address), with one
//          forwarding entry per peer node (head-end replication: no
//          multicast needed) and MAC learning from what arrives.
// The device is made in the agent's own namespace, so its UDP socket
// (port 4789) lives there, on the node's address, and is then moved in.
// Made with the run's first task here, deleted with its last (`ip netns
// del` takes the device with it). Made and deleted with iproute2's `ip` and
// `bridge`, from the agent's loop thread only.
//
// Assumes one agent per network namespace (a host): two agents in one would
// claim the same vni on the same port for a run on both.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "api/agent_protocol.h"
#include "base/status.h"

namespace tessera::node {

class JobNetworks {
 public:
  static constexpr std::uint32_t kOverlayBase = 0x0a800000;  // 10.128.0.0/9
  static constexpr int kOverlayPrefix = 9;

  explicit JobNetworks(std::string node_name) : node_(std::move(node_name)) {}

  // The overlay address of the run's node number `index`: "10.128.0.1" for 0.
  static std::string AddressOf(std::int32_t index);

  // The namespace (its path, /run/netns/...) the task's container joins,
  // made with the first of its run's tasks here.
  Result<std::string> Join(const api::TaskKey& key, const api::ContainerAssignment::Network& network);
  // The task is gone; the run's last task here takes the namespace with it. Idempotent.
  void Leave(const api::TaskKey& key);
  // Deletes this node's run namespaces that no task joined (left by an agent
  // that was killed): call once the running tasks are adopted.
  void Collect();

 private:
  using Run = std::pair<std::int64_t, std::int32_t>;  // job, attempt
  std::string Name(const Run& run) const;
  Status Make(const std::string& name, const api::ContainerAssignment::Network& network);

  std::string node_;
  std::map<Run, std::set<std::int32_t>> members_;  // the tasks here of each run with a namespace
  int devices_made_ = 0;                           // names the devices while they are in the agent's namespace
};

}  // namespace tessera::node
