// Load shedding: what the server takes on at once from unprivileged callers.
//
// A request holds a slot from the end of its headers until it is answered,
// and its body's bytes from then until it is answered too. Past
// `max_in_flight` requests, or `body_budget` bytes, a new unprivileged
// request is answered 503 with Retry-After at once, before its body is
// read: work the server has accepted is never dropped, and the memory that
// requests hold stays bounded. Agents and administrators are never shed (a
// node's heartbeat must get through an overload), and a request that waits
// for a change (a long poll) gives its slot back while it waits.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string_view>

namespace tessera::net {

struct LoadLimits {
  std::size_t max_in_flight = 512;
  std::uint64_t body_budget = 256ull << 20;  // bytes of unprivileged request bodies held at once
  int retry_after_s = 1;                     // what a shed request is told
};

enum class Shed { kInFlight, kMemory };
inline constexpr std::size_t kSheds = 2;
std::string_view ToString(Shed s);  // "in_flight", "memory"

class LoadShedder {
 public:
  explicit LoadShedder(LoadLimits limits) : limits_(limits) {}
  const LoadLimits& limits() const { return limits_; }

  // A slot for an unprivileged request whose body holds `body_bytes`; given
  // back when destroyed or by Release. Empty when the request was refused.
  class Slot {
   public:
    Slot() = default;
    Slot(Slot&& other) noexcept { *this = std::move(other); }
    Slot& operator=(Slot&& other) noexcept;
    ~Slot() { Release(); }
    void Release();
    explicit operator bool() const { return owner_ != nullptr; }

   private:
    friend class LoadShedder;
    Slot(LoadShedder* owner, std::uint64_t bytes) : owner_(owner), bytes_(bytes) {}
    LoadShedder* owner_ = nullptr;
    std::uint64_t bytes_ = 0;
  };
  // A slot, or why none is free (counted as shed).
  std::optional<Shed> Admit(std::uint64_t body_bytes, Slot* slot);

  struct Counts {
    std::size_t in_flight = 0;
    std::uint64_t body_bytes = 0;
    std::array<std::uint64_t, kSheds> shed{};  // by Shed, since start
  };
  Counts counts() const;

 private:
  void Give(std::uint64_t bytes);

  LoadLimits limits_;
  mutable std::mutex mu_;
  Counts counts_;
};

}  // namespace tessera::net
