#include "net/load_shedder.h"

#include <utility>

namespace tessera::net {

std::string_view ToString(Shed s) { return s == Shed::kInFlight ? "in_flight" : "memory"; }

LoadShedder::Slot& LoadShedder::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    Release();
    owner_ = std::exchange(other.owner_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void LoadShedder::Slot::Release() {
  if (owner_ != nullptr) std::exchange(owner_, nullptr)->Give(bytes_);
  bytes_ = 0;
}

std::optional<Shed> LoadShedder::Admit(std::uint64_t body_bytes, Slot* slot) {
  std::lock_guard lock(mu_);
  std::optional<Shed> why;
  if (counts_.in_flight >= limits_.max_in_flight) {
    why = Shed::kInFlight;
  } else if (counts_.body_bytes + body_bytes > limits_.body_budget) {
    why = Shed::kMemory;
  }
  if (why) {
    ++counts_.shed[static_cast<std::size_t>(*why)];
    return why;
  }
  ++counts_.in_flight;
  counts_.body_bytes += body_bytes;
  *slot = Slot(this, body_bytes);
  return std::nullopt;
}

void LoadShedder::Give(std::uint64_t bytes) {
  std::lock_guard lock(mu_);
  --counts_.in_flight;
  counts_.body_bytes -= bytes;
}

LoadShedder::Counts LoadShedder::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

}  // namespace tessera::net
