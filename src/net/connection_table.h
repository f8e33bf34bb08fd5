// Who holds the server's connections, and who may open another.
//
// A listener open to everyone meets clients that open connections and never
// finish a request. The table caps them: every connection counts against
// `max_connections`; connections that have not proved a privileged identity
// (an agent, a cluster administrator) may use all but the `reserved` last
// ones, and at most `max_per_address` from one address. A newcomer past a
// cap first evicts the oldest connection under it that has not finished a
// first request (a client that means business finishes one within
// milliseconds), so slow clients cannot hold a cap against anyone, their
// own address included. With none to evict, a newcomer is still taken on
// probation, a few per address and up to half the reserve: its first
// request must prove it privileged, or it is answered 503 and closed. So
// agents and administrators get in while the rest is full.
// docs/security.md ("Connection limits") gives the defaults.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tessera::net {

// What a connection has shown of its sender. kUnidentified: no request read yet.
enum class PeerClass { kUnidentified, kClient, kAgent, kAdmin };
inline constexpr std::size_t kPeerClasses = 4;
constexpr bool Privileged(PeerClass c) { return c == PeerClass::kAgent || c == PeerClass::kAdmin; }
std::string_view ToString(PeerClass c);  // "unidentified", "client", "agent", "admin"

enum class Refusal { kServerFull, kUntrustedFull, kAddressFull, kDescriptors, kNotPrivileged, kEvicted };
inline constexpr std::size_t kRefusals = 6;
// "server_full", "untrusted_full", "address_full", "descriptors", "not_privileged", "evicted"
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
    std::uint64_t id = 0;                    // the connection's, unless refused
  };
  // Closes a connection to make room (from any thread, never under the table's lock).
  using Evict = std::function<void()>;
  // A new connection from `address`; counted unless refused (and then the
  // refusal is counted). `evict` closes it, should a newcomer need its place
  // before it has finished a first request.
  Decision Open(const std::string& address, Evict evict);
  // Its first request showed who it is. A connection on probation that is
  // not privileged is refused (counted) and stays counted until it closes.
  void Identify(std::uint64_t id, PeerClass to);
  void Close(std::uint64_t id);
  void CountRefusal(Refusal why);

  struct Counts {
    std::array<std::size_t, kPeerClasses> open{};  // by PeerClass
    std::size_t probation = 0;
    std::array<std::uint64_t, kRefusals> refused{};  // by Refusal, since start
  };
  Counts counts() const;

 private:
  struct Connection {
    std::string address;
    bool probation = false;
    PeerClass peer = PeerClass::kUnidentified;
    Evict evict;  // until it is identified or evicted
  };
  struct PerAddress {
    std::size_t unprivileged = 0;
    std::size_t probation = 0;
    std::set<std::uint64_t> evictable;  // unidentified, oldest first
  };
  // Open's decision, making room where it can (mu_ held, as below).
  Decision Admit(const std::string& address, std::vector<Evict>& evicted);
  // Evicts the oldest evictable connection, of `from` or of any address
  // (nullptr); false when there is none. Its closing is left to the caller.
  bool EvictOldest(PerAddress* from, std::vector<Evict>& evicted);
  // It can no longer be evicted (identified, evicted or closed).
  void Unlist(std::uint64_t id, Connection& c);
  // One unprivileged connection less (mu_ held).
  void Forget(const std::string& address, bool probation);

  ConnectionLimits limits_;
  mutable std::mutex mu_;
  Counts counts_;
  std::size_t total_ = 0;
  std::size_t unprivileged_ = 0;
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, Connection> connections_;
  std::set<std::uint64_t> evictable_;  // every address's, oldest first
  std::map<std::string, PerAddress, std::less<>> addresses_;
};

}  // namespace tessera::net
