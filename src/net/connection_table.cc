#include "net/connection_table.h"

#include <sys/resource.h>

#include <algorithm>

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

ConnectionTable::Decision ConnectionTable::Open(const std::string& address) {
  std::lock_guard lock(mu_);
  const auto refuse = [this](Refusal why) {
    ++counts_.refused[static_cast<std::size_t>(why)];
    return Decision{Admission::kRefused, why};
  };
  if (total_ >= limits_.max_connections) return refuse(Refusal::kServerFull);
  PerAddress& from = addresses_[address];
  Decision decision{Admission::kAdmitted};
  if (unprivileged_ >= limits_.max_connections - limits_.reserved || from.unprivileged >= limits_.max_per_address) {
    const Refusal why = from.unprivileged >= limits_.max_per_address ? Refusal::kAddressFull : Refusal::kUntrustedFull;
    if (counts_.probation >= limits_.reserved / 2 || from.probation >= limits_.probation_per_address) {
      if (from.unprivileged == 0 && from.probation == 0) addresses_.erase(address);
      return refuse(why);
    }
    decision = {Admission::kProbation, why};
    ++from.probation;
    ++counts_.probation;
  }
  ++total_;
  ++unprivileged_;
  ++from.unprivileged;
  ++counts_.open[static_cast<std::size_t>(PeerClass::kUnidentified)];
  return decision;
}

void ConnectionTable::Identify(const std::string& address, bool probation, PeerClass to) {
  std::lock_guard lock(mu_);
  --counts_.open[static_cast<std::size_t>(PeerClass::kUnidentified)];
  ++counts_.open[static_cast<std::size_t>(to)];
  if (probation && !Privileged(to)) ++counts_.refused[static_cast<std::size_t>(Refusal::kNotPrivileged)];
  // A privileged connection leaves the unprivileged counts, and probation.
  if (Privileged(to)) Forget(address, probation);
}

void ConnectionTable::Close(const std::string& address, bool probation, PeerClass as) {
  std::lock_guard lock(mu_);
  --total_;
  --counts_.open[static_cast<std::size_t>(as)];
  if (!Privileged(as)) Forget(address, probation);
}

void ConnectionTable::Forget(const std::string& address, bool probation) {
  auto it = addresses_.find(address);
  --unprivileged_;
  --it->second.unprivileged;
  if (probation) {
    --it->second.probation;
    --counts_.probation;
  }
  if (it->second.unprivileged == 0 && it->second.probation == 0) addresses_.erase(it);
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
