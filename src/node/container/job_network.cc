#include "node/container/job_network.h"

#include <arpa/inet.h>

#include <filesystem>
#include <vector>

#include "node/image/command.h"

namespace tessera::node {

namespace {

namespace fs = std::filesystem;

constexpr const char* kNetnsDir = "/run/netns/";

// Runs `ip`/`bridge` to completion; their last words on failure.
Status RunIproute(std::vector<std::string> argv) {
  const std::string what = [&] {
    std::string joined;
    for (const std::string& a : argv) joined += (joined.empty() ? "" : " ") + a;
    return joined;
  }();
  Result<CommandResult> ran = RunCommand({std::move(argv), std::chrono::seconds(10)});
  if (!ran.ok()) return Status(ran.status().code(), what + ": " + ran.status().message());
  if (ran->exit_code != 0) {
    return FailedPrecondition(what + " failed (exit " + std::to_string(ran->exit_code) + "): " + ToolMessage(ran->stderr_tail + ran->stdout_tail));
  }
  return Status::Ok();
}

bool IsIpv4(const std::string& address) {
  in_addr parsed{};
  return inet_pton(AF_INET, address.c_str(), &parsed) == 1;
}

}  // namespace

std::string JobNetworks::AddressOf(std::int32_t index) {
  const std::uint32_t a = kOverlayBase + 1 + static_cast<std::uint32_t>(index);
  return std::to_string(a >> 24) + "." + std::to_string(a >> 16 & 255) + "." + std::to_string(a >> 8 & 255) + "." + std::to_string(a & 255);
}

std::string JobNetworks::Name(const Run& run) const {
  return "tsr-" + node_ + "-" + std::to_string(run.first) + "-" + std::to_string(run.second);
}

Result<std::string> JobNetworks::Join(const api::TaskKey& key, const api::ContainerAssignment::Network& network) {
  const Run run{key.job, key.attempt};
  const std::string name = Name(run);
  std::error_code ec;
  // Made by this agent, or by the one before it (a task it adopts).
  if (!members_.contains(run) && !fs::exists(kNetnsDir + name, ec)) {
    if (Status made = Make(name, network); !made.ok()) {
      (void)RunIproute({"ip", "netns", "del", name});
      return made;
    }
  }
  members_[run].insert(key.task);
  return kNetnsDir + name;
}

Status JobNetworks::Make(const std::string& name, const api::ContainerAssignment::Network& network) {
  TESSERA_RETURN_IF_ERROR(RunIproute({"ip", "netns", "add", name}));
  TESSERA_RETURN_IF_ERROR(RunIproute({"ip", "-n", name, "link", "set", "lo", "up"}));
  if (network.nodes.size() < 2) return Status::Ok();  // a run on one node: its containers meet on loopback
  const std::string& local = network.nodes[static_cast<std::size_t>(network.index)];
  for (const std::string& node : network.nodes) {
    if (!IsIpv4(node)) {
      return FailedPrecondition("an isolated network joins nodes by their IPv4 addresses; node address '" + node +
                                "' is none (give agents --address)");
    }
  }
  const std::string device = "tsrvx" + std::to_string(devices_made_++ % 100000);
  TESSERA_RETURN_IF_ERROR(RunIproute({"ip", "link", "add", device, "type", "vxlan", "id", std::to_string(network.vni), "local", local,
                               "dstport", "4789"}));
  if (Status moved = RunIproute({"ip", "link", "set", device, "netns", name}); !moved.ok()) {
    (void)RunIproute({"ip", "link", "del", device});
    return moved;
  }
  TESSERA_RETURN_IF_ERROR(RunIproute({"ip", "-n", name, "addr", "add", AddressOf(network.index) + "/" + std::to_string(kOverlayPrefix), "dev", device}));
  TESSERA_RETURN_IF_ERROR(RunIproute({"ip", "-n", name, "link", "set", device, "up"}));
  for (const std::string& peer : network.nodes) {
    if (peer == local) continue;
    TESSERA_RETURN_IF_ERROR(RunIproute({"ip", "netns", "exec", name, "bridge", "fdb", "append", "00:00:00:00:00:00", "dev", device, "dst", peer}));
  }
  return Status::Ok();
}

void JobNetworks::Leave(const api::TaskKey& key) {
  const auto it = members_.find({key.job, key.attempt});
  if (it == members_.end() || it->second.erase(key.task) == 0 || !it->second.empty()) return;
  (void)RunIproute({"ip", "netns", "del", Name(it->first)});
  members_.erase(it);
}

void JobNetworks::Collect() {
  std::error_code ec;
  const std::string prefix = "tsr-" + node_ + "-";
  std::set<std::string> kept;
  for (const auto& [run, tasks] : members_) kept.insert(Name(run));
  for (const fs::directory_entry& entry : fs::directory_iterator(kNetnsDir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(prefix) && !kept.contains(name)) (void)RunIproute({"ip", "netns", "del", name});
  }
}

}  // namespace tessera::node
