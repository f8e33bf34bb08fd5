#include "controlplane/rendezvous_ports.h"

namespace tessera::controlplane {

std::int32_t RendezvousPorts::Take(const std::string& node) {
  std::set<std::int32_t>& held = held_[node];
  std::int32_t port = kFirst;
  // The held ports in order: the first gap is the lowest free one.
  for (auto it = held.lower_bound(kFirst); it != held.end() && *it == port; ++it) ++port;
  if (port >= kFirst + kCount) return kFirst;
  held.insert(port);
  return port;
}

void RendezvousPorts::Hold(const std::string& node, std::int32_t port) { held_[node].insert(port); }

void RendezvousPorts::Release(const std::string& node, std::int32_t port) {
  auto it = held_.find(node);
  if (it == held_.end()) return;
  it->second.erase(port);
  if (it->second.empty()) held_.erase(it);
}

std::size_t RendezvousPorts::held(const std::string& node) const {
  auto it = held_.find(node);
  return it == held_.end() ? 0 : it->second.size();
}

}  // namespace tessera::controlplane
