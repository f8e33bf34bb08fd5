// MASTER_PORT for each run (gang_env.h): the lowest port of torchrun's range
// that no other live run whose rank 0 is on the same node holds, so two
// gangs that share their first node never try to listen on one port.
// Released when the run leaves its nodes; rebuilt by recovery from the
// records of the runs that are still live.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>

namespace tessera::controlplane {

class RendezvousPorts {
 public:
  static constexpr std::int32_t kFirst = 29500;  // torchrun's default
  static constexpr std::int32_t kCount = 10'000;

  // The lowest free port of [kFirst, kFirst + kCount) on `node`, now held.
  // Were all of them held (ten thousand live runs with rank 0 on one node,
  // far beyond what a node hosts), kFirst is shared.
  std::int32_t Take(const std::string& node);
  // Holds a port a run already has (recovery); holding one twice is harmless.
  void Hold(const std::string& node, std::int32_t port);
  void Release(const std::string& node, std::int32_t port);

  std::size_t held(const std::string& node) const;

 private:
  std::unordered_map<std::string, std::set<std::int32_t>> held_;
};

}  // namespace tessera::controlplane
