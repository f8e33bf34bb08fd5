// Who holds the server's connections, and who may open another.
//
// A listener open to everyone meets clients that open connections and never
// finish a request. The table caps them: every connection counts against
// `max_connections`; connections that have not proved a privileged identity
// (an agent, a cluster administrator) may use all but the `reserved` last
// ones, and at most `max_per_address` from one address. Past those caps a
// new connection is still taken on probation, a few per address and up to
// half the reserve: its first request must prove it privileged, or it is
// answered 503 and closed. So agents and administrators get in while the
// rest is full, and one address cannot fill the reserve. docs/security.md
// ("Connection limits") gives the defaults and what they protect.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace tessera::net {

// What a connection has shown of its sender. kUnidentified: no request read yet.
enum class PeerClass { kUnidentified, kClient, kAgent, kAdmin };
inline constexpr std::size_t kPeerClasses = 4;
constexpr bool Privileged(PeerClass c) { return c == PeerClass::kAgent || c == PeerClass::kAdmin; }
std::string_view ToString(PeerClass c);  // "unidentified", "client", "agent", "admin"

enum class Refusal { kServerFull, kUntrustedFull, kAddressFull, kDescriptors, kNotPrivileged };
inline constexpr std::size_t kRefusals = 5;
// "server_full", "untrusted_full", "address_full", "descriptors", "not_privileged"
std::string_view ToString(Refusal r);

struct ConnectionLimits {
  std::size_t max_connections = 0;    // 0: DefaultMaxConnections()
  std::size_t reserved = 0;           // 0: an eighth of max_connections, for agents and administrators
  std::size_t max_per_address = 0;    // 0: an eighth of max_connections; unprivileged connections from one address
  std::size_t probation_per_address = 8;
};

// What the process's descriptor limit allows: all of it but 256 descriptors
// (the store, logs, the agents' pipes in `tessera up`), at most 32,768.
std::size_t DefaultMaxConnections();
// Raises the soft descriptor limit to the hard one; returns the new soft limit.
std::uint64_t RaiseDescriptorLimit();

class ConnectionTable {
 public:
  explicit ConnectionTable(ConnectionLimits limits);  // zeros filled in with the defaults
  const ConnectionLimits& limits() const { return limits_; }

  enum class Admission { kAdmitted, kProbation, kRefused };
  struct Decision {
    Admission admission;
    Refusal refusal = Refusal::kServerFull;  // with kRefused, and with kProbation: the limit it is past
  };
  // A new connection from `address`; counted unless refused (and then the
  // refusal is counted).
  Decision Open(const std::string& address);
  // Its first request showed who it is. A connection on probation that is
  // not privileged is refused (counted) and stays counted until it closes.
  void Identify(const std::string& address, bool probation, PeerClass to);
  void Close(const std::string& address, bool probation, PeerClass as);
  void CountRefusal(Refusal why);

  struct Counts {
    std::array<std::size_t, kPeerClasses> open{};  // by PeerClass
    std::size_t probation = 0;
    std::array<std::uint64_t, kRefusals> refused{};  // by Refusal, since start
  };
  Counts counts() const;

 private:
  struct PerAddress {
    std::size_t unprivileged = 0;
    std::size_t probation = 0;
  };
  // One unprivileged connection from `address` less (mu_ held).
  void Forget(const std::string& address, bool probation);

  ConnectionLimits limits_;
  mutable std::mutex mu_;
  Counts counts_;
  std::size_t total_ = 0;
  std::size_t unprivileged_ = 0;
  std::map<std::string, PerAddress, std::less<>> addresses_;
};

}  // namespace tessera::net
