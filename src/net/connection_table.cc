#include "net/connection_table.h"

#include <sys/resource.h>

#include <algorithm>
#include <utility>

namespace tessera::net {

std::string_view ToString(PeerClass c) {
  switch (c) {
    case PeerClass::kUnidentified: return "unidentified";
    case PeerClass::kClient: return "client";
    case PeerClass::kAgent: return "agent";
    case PeerClass::kAdmin: return "admin";
  }
  return "unidentified";
}

std::string_view ToString(Refusal r) {
  switch (r) {
    case Refusal::kServerFull: return "server_full";
    case Refusal::kUntrustedFull: return "untrusted_full";
    case Refusal::kAddressFull: return "address_full";
    case Refusal::kDescriptors: return "descriptors";
    case Refusal::kNotPrivileged: return "not_privileged";
    case Refusal::kEvicted: return "evicted";
  }
  return "server_full";
}

std::uint64_t RaiseDescriptorLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur == RLIM_INFINITY ? std::uint64_t{1} << 20 : static_cast<std::uint64_t>(limit.rlim_cur);
}

std::size_t DefaultMaxConnections() {
  rlimit limit{};
  const std::uint64_t descriptors =
      ::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ? 1 << 20 : static_cast<std::uint64_t>(limit.rlim_cur);
  // A tiny limit still leaves the server half of it.
  const std::uint64_t usable = descriptors > 512 ? descriptors - 256 : descriptors / 2;
  return static_cast<std::size_t>(std::min<std::uint64_t>(usable, 32768));
}

ConnectionTable::ConnectionTable(ConnectionLimits limits) : limits_(limits) {
  if (limits_.max_connections == 0) limits_.max_connections = DefaultMaxConnections();
  if (limits_.reserved == 0) limits_.reserved = std::max<std::size_t>(limits_.max_connections / 8, 1);
  limits_.reserved = std::min(limits_.reserved, limits_.max_connections);
  if (limits_.max_per_address == 0) limits_.max_per_address = std::max<std::size_t>(limits_.max_connections / 8, 1);
}

ConnectionTable::Decision ConnectionTable::Open(const std::string& address, Evict evict) {
  std::vector<Evict> evicted;
  Decision decision{Admission::kAdmitted};
  {
    std::lock_guard lock(mu_);
    decision = Admit(address, evicted);
    if (decision.admission != Admission::kRefused) {
      decision.id = next_id_++;
      PerAddress& from = addresses_[address];
      ++total_;
      ++unprivileged_;
      ++from.unprivileged;
      ++counts_.open[static_cast<std::size_t>(PeerClass::kUnidentified)];
      const bool probation = decision.admission == Admission::kProbation;
      if (probation) {
        ++from.probation;
        ++counts_.probation;
      }
      connections_.emplace(decision.id, Connection{address, probation, PeerClass::kUnidentified, std::move(evict)});
      from.evictable.insert(decision.id);
      evictable_.insert(decision.id);
    }
  }
  // Outside the lock: a connection being closed may call Close.
  for (const Evict& close : evicted) close();
  return decision;
}

ConnectionTable::Decision ConnectionTable::Admit(const std::string& address, std::vector<Evict>& evicted) {
  const auto refuse = [this](Refusal why) {
    ++counts_.refused[static_cast<std::size_t>(why)];
    return Decision{Admission::kRefused, why};
  };
  if (total_ >= limits_.max_connections && !EvictOldest(nullptr, evicted)) return refuse(Refusal::kServerFull);
  PerAddress& from = addresses_[address];
  std::optional<Refusal> past;
  if (from.unprivileged >= limits_.max_per_address) {
    if (!EvictOldest(&from, evicted)) past = Refusal::kAddressFull;
  } else if (unprivileged_ >= limits_.max_connections - limits_.reserved) {
    if (!EvictOldest(nullptr, evicted)) past = Refusal::kUntrustedFull;
  }
  if (!past) return {Admission::kAdmitted};
  if (counts_.probation >= limits_.reserved / 2 || from.probation >= limits_.probation_per_address) {
    if (from.unprivileged == 0 && from.probation == 0 && from.evictable.empty()) addresses_.erase(address);
    return refuse(*past);
  }
  return {Admission::kProbation, *past};
}

bool ConnectionTable::EvictOldest(PerAddress* from, std::vector<Evict>& evicted) {
  const std::set<std::uint64_t>& candidates = from != nullptr ? from->evictable : evictable_;
  if (candidates.empty()) return false;
  const std::uint64_t id = *candidates.begin();
  Connection& victim = connections_.at(id);
  evicted.push_back(std::move(victim.evict));
  Unlist(id, victim);
  ++counts_.refused[static_cast<std::size_t>(Refusal::kEvicted)];
  return true;
}

void ConnectionTable::Unlist(std::uint64_t id, Connection& c) {
  if (evictable_.erase(id) == 0) return;
  addresses_.at(c.address).evictable.erase(id);
  c.evict = nullptr;
}

void ConnectionTable::Identify(std::uint64_t id, PeerClass to) {
  std::lock_guard lock(mu_);
  Connection& c = connections_.at(id);
  Unlist(id, c);
  --counts_.open[static_cast<std::size_t>(c.peer)];
  ++counts_.open[static_cast<std::size_t>(to)];
  c.peer = to;
  if (c.probation && !Privileged(to)) ++counts_.refused[static_cast<std::size_t>(Refusal::kNotPrivileged)];
  // A privileged connection leaves the unprivileged counts, and probation.
  if (Privileged(to)) Forget(c.address, std::exchange(c.probation, false));
}

void ConnectionTable::Close(std::uint64_t id) {
  std::lock_guard lock(mu_);
  auto it = connections_.find(id);
  Connection& c = it->second;
  Unlist(id, c);
  --total_;
  --counts_.open[static_cast<std::size_t>(c.peer)];
  if (!Privileged(c.peer)) Forget(c.address, c.probation);
  connections_.erase(it);
}

void ConnectionTable::Forget(const std::string& address, bool probation) {
  auto it = addresses_.find(address);
  --unprivileged_;
  --it->second.unprivileged;
  if (probation) {
    --it->second.probation;
    --counts_.probation;
  }
  if (it->second.unprivileged == 0 && it->second.probation == 0 && it->second.evictable.empty()) addresses_.erase(it);
}

void ConnectionTable::CountRefusal(Refusal why) {
  std::lock_guard lock(mu_);
  ++counts_.refused[static_cast<std::size_t>(why)];
}

ConnectionTable::Counts ConnectionTable::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

}  // namespace tessera::net
